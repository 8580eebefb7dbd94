import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService, queueKeys } from '@app/echomq/internal';
import { SCRIPT_BATCH_MAX } from '@app/echomq/scripts/limits';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { closeAll, deferred, processorClass, waitUntil } from './fixtures/support';

/**
 * Issue 8, item 1, on the worker's side: a concurrency above SCRIPT_BATCH_MAX is served by
 * more calls, never by a bigger one. Every claim, heartbeat and completion call leaves its
 * event on the queue's stream with the ids it moved, which is where the test reads the
 * size of each call.
 */
const CONCURRENCY = 2_000;
const JOBS = 5_000;

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

function idsOf(event: Record<string, string>): string[] {
  return event.ids ? event.ids.split(',') : event.id ? [event.id] : [];
}

describe('a worker wider than one script call', () => {
  it(`runs ${JOBS} jobs at concurrency ${CONCURRENCY}: each once, never more than ${CONCURRENCY} at a time, in calls of at most ${SCRIPT_BATCH_MAX}`, async () => {
    const queue = uniqueQueue('wide');
    const runs = new Map<string, number>();
    let running = 0;
    let most = 0;
    const full = deferred<void>();
    const open = deferred<void>();
    const Worker = processorClass(queue, { concurrency: CONCURRENCY, leaseMs: 3_000 }, async (job) => {
      runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
      running += 1;
      most = Math.max(most, running);
      if (running === CONCURRENCY) full.resolve();
      try {
        await open.promise; // the first CONCURRENCY jobs stay in flight until a heartbeat covered them
      } finally {
        running -= 1;
      }
    });
    const app = await bootApp([Worker], { shutdownGraceMs: 300, eventsMaxLen: 100_000 });
    apps.push(app);
    const queues = app.get(QueueService);

    for (let at = 0; at < JOBS; at += SCRIPT_BATCH_MAX) {
      await queues.enqueueMany(
        queue,
        Array.from({ length: Math.min(SCRIPT_BATCH_MAX, JOBS - at) }, (_, n) => ({ data: at + n })),
      );
    }
    await full.promise;

    // One heartbeat extends every job in flight (in slices of at most SCRIPT_BATCH_MAX).
    await waitUntil(
      async () => ((await queues.metrics(queue)).extended ?? 0) >= CONCURRENCY,
      'one heartbeat of every job',
    );
    open.resolve();

    await waitUntil(
      async () => (await queues.metrics(queue)).completed === JOBS,
      `all ${JOBS} jobs to complete`,
      60_000,
    );
    expect(runs.size).toBe(JOBS);
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    expect(most).toBe(CONCURRENCY);
    expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    expect(await redis.keys(`${queueKeys(queue).jobPrefix}*`)).toEqual([]); // no row left behind

    const sizes: Record<string, number[]> = { claimed: [], completed: [] };
    for (const [, fields] of await redis.xrange(queueKeys(queue).events, '-', '+')) {
      const event: Record<string, string> = {};
      for (let i = 0; i < fields.length; i += 2) event[fields[i]] = fields[i + 1];
      sizes[event.type]?.push(idsOf(event).length);
    }
    expect(sizes.claimed.reduce((sum, n) => sum + n, 0)).toBe(JOBS);
    expect(sizes.completed.reduce((sum, n) => sum + n, 0)).toBe(JOBS);
    for (const type of Object.keys(sizes)) {
      expect(Math.max(...sizes[type])).toBeLessThanOrEqual(SCRIPT_BATCH_MAX);
    }
  }, 90_000);
});
