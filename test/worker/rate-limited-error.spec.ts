import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { Redis } from 'ioredis';
import {
  EchoMqModule,
  QueueService,
  queueKeys,
  RateLimitedError,
  SCRIPTS,
  type Job,
  type QueueOptions,
  type WorkerEvents,
} from '@app/echomq/internal';
import { CapturedLog } from '../support/captured-log';
import { bootApp } from '../support/nest';
import { openMonitor } from '../support/monitor';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import { closeAll, loopOf, processorClass, serverNow } from './fixtures/support';

const apps: INestApplication[] = [];
let redis: Redis;

beforeAll(() => {
  redis = connect();
});

afterAll(() => {
  redis.disconnect();
});

afterEach(async () => {
  await closeAll(apps.splice(0));
});

async function boot(providers: Parameters<typeof bootApp>[0]): Promise<INestApplication> {
  const app = await bootApp(providers, { shutdownGraceMs: 300 });
  apps.push(app);
  return app;
}

/** Boots a worker whose log the test reads (a throttle is told at `log` level). */
async function bootLogged(
  providers: Parameters<typeof bootApp>[0],
): Promise<{ app: INestApplication; log: CapturedLog }> {
  const log = new CapturedLog();
  const moduleRef = await Test.createTestingModule({
    imports: [
      EchoMqModule.forRoot({
        connection: { url: redisUrl() },
        reaper: { intervalMs: 100 },
        shutdownGraceMs: 300,
      }),
    ],
    providers,
  }).compile();
  const app = moduleRef.createNestApplication({ logger: log });
  await app.init();
  apps.push(app);
  return { app, log };
}

/**
 * One job at a time and a budget of one attempt: if a throttle spent the attempt, the job
 * would go to dead instead of running again.
 */
const OPTIONS: QueueOptions = { concurrency: 1, maxAttempts: 1, retainCompletedMs: 60_000 };

/** One start of a handler: which job, which attempt, and the server time it started at. */
interface Start {
  readonly id: string;
  readonly attempt: number;
  readonly attemptInBudget: number;
  readonly at: number;
}

/** Counts the claim script calls on one queue, as Redis sees them (MONITOR), from start() on. */
class ClaimWatch {
  count = 0;

  private constructor(private readonly monitor: Redis) {}

  static async start(queue: string): Promise<ClaimWatch> {
    const sha = createHash('sha1').update(SCRIPTS.emqClaim.lua).digest('hex');
    const active = queueKeys(queue).active;
    const monitor = await openMonitor();
    const watch = new ClaimWatch(monitor);
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === 'evalsha' && args[1] === sha && args.includes(active)) watch.count += 1;
    });
    return watch;
  }

  stop(): void {
    this.monitor.disconnect();
  }
}

describe('RateLimitedError', () => {
  it('puts the job back without spending its attempt and holds the queue for retryAfterMs', async () => {
    const queue = uniqueQueue('throttle');
    const retryAfterMs = 700;
    const starts: Start[] = [];
    let thrownAt = 0;
    const Proc = processorClass(queue, OPTIONS, async (job: Job) => {
      const at = await serverNow(redis);
      starts.push({ id: job.id, attempt: job.attempt, attemptInBudget: job.attemptInBudget, at });
      if (starts.length === 1) {
        thrownAt = await serverNow(redis);
        throw new RateLimitedError(retryAfterMs);
      }
      return job.attempt;
    });
    const app = await boot([Proc]);
    const queues = app.get(QueueService);
    const loop = loopOf(app, queue);
    const throttled = once(loop.events, 'throttled') as Promise<WorkerEvents['throttled']>;
    let failures = 0;
    loop.events.on('failed', () => (failures += 1));

    const first = await queues.enqueue(queue, 'first');
    const [throttledId, heldFor, scope, job] = await throttled;
    expect([throttledId, heldFor, scope, job.id]).toEqual([first, retryAfterMs, 'queue', first]);
    // Back in pending (the hold keeps it there), and held back for every job: an enqueue
    // meanwhile does not wake the loop early.
    expect((await queues.getJob(queue, first))?.state).toBe('pending');
    const second = await queues.enqueue(queue, 'second');

    await expect(queues.waitFor(queue, first, 10_000)).resolves.toBe(2);
    await expect(queues.waitFor(queue, second, 10_000)).resolves.toBe(1);

    // The attempt was not spent: the retry is the first of its budget (with maxAttempts 1).
    expect(starts.map(({ id, attempt, attemptInBudget }) => [id, attempt, attemptInBudget])).toEqual([
      [first, 1, 1],
      [first, 2, 1],
      [second, 1, 1],
    ]);
    expect(failures).toBe(0);
    // No claim before the hold ended: the hold started after thrownAt (server clock).
    for (const start of starts.slice(1)) expect(start.at).toBeGreaterThanOrEqual(thrownAt + retryAfterMs);
  });

  it("holds only the job's lane with scope 'lane': other lanes run meanwhile", async () => {
    const queue = uniqueQueue('throttle-lane');
    const retryAfterMs = 2_000;
    const starts: Start[] = [];
    let thrownAt = 0;
    const Proc = processorClass(queue, OPTIONS, async (job: Job) => {
      const at = await serverNow(redis);
      starts.push({ id: job.id, attempt: job.attempt, attemptInBudget: job.attemptInBudget, at });
      if (job.data === 'limited' && job.attempt === 1) {
        thrownAt = await serverNow(redis);
        throw new RateLimitedError(retryAfterMs, { scope: 'lane' });
      }
      return job.lane;
    });
    const app = await boot([Proc]);
    const queues = app.get(QueueService);
    const throttled = once(loopOf(app, queue).events, 'throttled') as Promise<WorkerEvents['throttled']>;

    const limited = await queues.enqueue(queue, 'limited', { lane: 'acme' });
    await throttled;
    const other = await queues.enqueue(queue, 'other', { lane: 'globex' });

    await expect(queues.waitFor(queue, other, 10_000)).resolves.toBe('globex');
    await expect(queues.waitFor(queue, limited, 10_000)).resolves.toBe('acme');
    expect(starts.map(({ id, attempt, attemptInBudget }) => [id, attempt, attemptInBudget])).toEqual([
      [limited, 1, 1],
      [other, 1, 1],
      [limited, 2, 1],
    ]);
    expect(starts[2].at).toBeGreaterThanOrEqual(thrownAt + retryAfterMs);
  });

  it('wakes an idle loop with free slots for a queue hold, so the job runs again once the hold ends', async () => {
    const queue = uniqueQueue('throttle-wake');
    const starts: string[] = [];
    // Two slots: the loop claims the one job, and then waits on the wake list with a slot free.
    const Proc = processorClass(queue, { ...OPTIONS, concurrency: 2 }, (job: Job) => {
      starts.push(`${String(job.data)}@${job.attempt}`);
      if (job.data === 'limited' && job.attempt === 1) throw new RateLimitedError(100);
      return job.attempt;
    });
    // The idle loop's wait is bounded by the next run-at in schedule: a job due in 1.5 s, older
    // than the limited one (it is minted first), so a claim at that bound would start it first.
    const producer = await boot([]);
    const queues = producer.get(QueueService);
    const later = await queues.enqueue(queue, 'later', { delayMs: 1_500 });
    const limited = await queues.enqueue(queue, 'limited');
    // No loop took the enqueue's wake token; dropped, so only the throttle can end the wait early.
    await redis.del(queueKeys(queue).wake);
    await boot([Proc]);

    await expect(queues.waitFor(queue, limited, 10_000)).resolves.toBe(2);
    await expect(queues.waitFor(queue, later, 10_000)).resolves.toBe(1);
    // The throttle woke the loop: its claim met the hold and slept exactly until it ended,
    // long before the bound.
    expect(starts).toEqual(['limited@1', 'limited@2', 'later@1']);
  });

  it('sleeps through the hold: enqueues meanwhile do not make the loop claim', async () => {
    const queue = uniqueQueue('throttle-quiet');
    const claims = await ClaimWatch.start(queue);
    let claimsBeforeRetry = -1;
    const Proc = processorClass(queue, OPTIONS, (job: Job) => {
      if (job.data === 'limited' && job.attempt === 1) throw new RateLimitedError(1_000);
      if (job.data === 'limited') claimsBeforeRetry = claims.count;
      return job.attempt;
    });
    const app = await boot([Proc]);
    const queues = app.get(QueueService);
    const throttled = once(loopOf(app, queue).events, 'throttled');

    const limited = await queues.enqueue(queue, 'limited');
    await throttled;
    const atThrottle = claims.count;
    // Each enqueue signals the wake list; a loop waiting there would claim once per signal.
    const others: string[] = [];
    for (let n = 0; n < 12; n++) others.push(await queues.enqueue(queue, `other ${n}`));

    await expect(queues.waitFor(queue, limited, 10_000)).resolves.toBe(2);
    await Promise.all(others.map((id) => queues.waitFor(queue, id, 10_000)));
    claims.stop();
    // Up to the retry's start: a claim sent as the slot freed (before the throttle was
    // recorded), the one that found the queue held, one that may find the hold in its last
    // millisecond, and the one that took the job back. Not one per enqueue.
    expect(claimsBeforeRetry - atThrottle).toBeLessThanOrEqual(4);
  });

  it('counts a throttle of a claim that is no longer held as stale', async () => {
    const queue = uniqueQueue('throttle-stale');
    const Proc = processorClass(queue, OPTIONS, async (job: Job) => {
      // Removed while active: the claim no longer holds the job when the throttle arrives.
      await app.get(QueueService).remove(queue, job.id);
      throw new RateLimitedError(1_000);
    });
    const app = await boot([Proc]);
    const loop = loopOf(app, queue);
    const stale = once(loop.events, 'stale') as Promise<WorkerEvents['stale']>;
    let throttles = 0;
    loop.events.on('throttled', () => (throttles += 1));

    const id = await app.get(QueueService).enqueue(queue, {});

    await expect(stale).resolves.toEqual([id, 1]);
    expect(loop.runner.staleSettlements).toBe(1);
    expect(throttles).toBe(0);
  });

  it("throttles, and does not fail, on a Retry-After of '0' (a hold of 1 ms), and logs it", async () => {
    const queue = uniqueQueue('throttle-zero');
    const Proc = processorClass(queue, OPTIONS, (job: Job) => {
      // What a 429 handler does with `response.headers.get('retry-after')`.
      if (job.attempt === 1) throw RateLimitedError.fromRetryAfter('0', { scope: 'lane' });
      return job.attemptInBudget;
    });
    const { app, log } = await bootLogged([Proc]);
    const queues = app.get(QueueService);
    const loop = loopOf(app, queue);
    const throttled = once(loop.events, 'throttled') as Promise<WorkerEvents['throttled']>;
    let failures = 0;
    loop.events.on('failed', () => (failures += 1));

    const id = await queues.enqueue(queue, {});
    const [, heldFor, scope] = await throttled;

    expect([heldFor, scope]).toEqual([1, 'lane']);
    // With maxAttempts 1, a failure would have sent it to dead; the retry is the first of its budget.
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toBe(1);
    expect(failures).toBe(0);
    // Told at the default level (not debug), so a limited upstream shows in production logs.
    expect(
      log.matching((line) => line.level === 'log' && line.message.includes(`Job ${id} was rate limited`)),
    ).toHaveLength(1);
  });

  it("throttles on an error of another copy of the package: code 'RATE_LIMITED' and a numeric retryAfterMs", async () => {
    const queue = uniqueQueue('throttle-foreign');
    const Proc = processorClass(queue, OPTIONS, (job: Job) => {
      // Not an instance of this copy's class: a plain object shaped like one.
      if (job.attempt === 1)
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- what another copy's error looks like here
        throw { code: 'RATE_LIMITED', retryAfterMs: 250.5, scope: 'lane', message: '429' };
      return job.attemptInBudget;
    });
    const app = await boot([Proc]);
    const queues = app.get(QueueService);
    const loop = loopOf(app, queue);
    const throttled = once(loop.events, 'throttled') as Promise<WorkerEvents['throttled']>;
    let failures = 0;
    loop.events.on('failed', () => (failures += 1));

    const id = await queues.enqueue(queue, {});
    const [throttledId, heldFor, scope] = await throttled;

    // Clamped by this copy's rules (rounded up), its scope kept.
    expect([throttledId, heldFor, scope]).toEqual([id, 251, 'lane']);
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toBe(1);
    expect(failures).toBe(0);
  });

  it("fails, as any error, on an object with code 'RATE_LIMITED' but no numeric retryAfterMs", async () => {
    const queue = uniqueQueue('throttle-not');
    const Proc = processorClass(queue, OPTIONS, () => {
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- what another copy's error looks like here
      throw { code: 'RATE_LIMITED', retryAfterMs: '250' };
    });
    const app = await boot([Proc]);
    const loop = loopOf(app, queue);
    const failed = once(loop.events, 'failed') as Promise<WorkerEvents['failed']>;
    let throttles = 0;
    loop.events.on('throttled', () => (throttles += 1));

    await app.get(QueueService).enqueue(queue, {});

    const [, , state] = await failed;
    expect(state).toBe('dead');
    expect(throttles).toBe(0);
  });
});
