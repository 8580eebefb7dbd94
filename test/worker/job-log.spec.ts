import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import request from 'supertest';
import {
  appendJobLog,
  claimJobs,
  enqueueJobs,
  InvalidArgumentError,
  JOB_LOG_LINE_MAX_BYTES,
  JOB_LOG_LINES_KEPT,
  QueueService,
  readJobView,
  reapExpired,
  StaleJobError,
  toJobView,
  type Job,
  type JobId,
} from '@app/echomq/internal';
import { startApi, type RunningApi } from '../api/support/api';
import { backdate, jobRecord } from '../support/assertions';
import { RedisServer } from '../support/redis-server';
import { bootApp } from '../support/nest';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { closeAll, deferred, processorClass, type Deferred } from './fixtures/support';

const apps: INestApplication[] = [];
const gates: Deferred<void>[] = [];
let redis: Redis;
const mint = idMinter(41);

/** A worker whose handler runs `body`, then waits for the test to open the gate. */
async function workerThat(
  queue: string,
  body: (job: Job) => Promise<void>,
): Promise<{ queues: QueueService; logged: Promise<Job>; gate: Deferred<void> }> {
  const gate = deferred<void>();
  gates.push(gate);
  const logged = deferred<Job>();
  const Worker = processorClass(queue, { leaseMs: 60_000 }, async (job) => {
    await body(job);
    logged.resolve(job);
    await gate.promise;
    return 'done';
  });
  const app = await bootApp([Worker], { shutdownGraceMs: 300 });
  apps.push(app);
  return { queues: app.get(QueueService), logged: logged.promise, gate };
}

/** A claimed job through the scripts, for the fencing cases. */
async function claimedJob(queue: string) {
  const ctx = scriptContext(redis, queue);
  const id = mint();
  await enqueueJobs(ctx, [jobRecord(id)], 60_000);
  const [claim] = (await claimJobs(ctx, { count: 1, leaseMs: 60_000, claimantPrefix: `log-${id}` })).jobs;
  return { ctx, id, claim };
}

beforeAll(() => {
  redis = connect();
});

afterAll(() => {
  redis.disconnect();
});

afterEach(async () => {
  for (const gate of gates.splice(0)) gate.resolve();
  await closeAll(apps.splice(0));
});

describe('job.log(line)', () => {
  it('keeps the lines in order and shows them in the job view, over the library and HTTP', async () => {
    const queue = uniqueQueue('log');
    const { queues, logged } = await workerThat(queue, async (job) => {
      for (const line of ['connecting', 'sending', 'sent']) await job.log(line);
    });
    const id = await queues.enqueue(queue, {});
    await logged;

    expect(await queues.getJob(queue, id)).toMatchObject({
      state: 'active',
      logs: ['connecting', 'sending', 'sent'],
      logsDropped: 0,
    });
    let api: RunningApi | undefined;
    try {
      api = await startApi();
      const res = await request(api.url).get(`/queues/${queue}/jobs/${id}`).expect(200);
      expect(res.body).toMatchObject({ logs: ['connecting', 'sending', 'sent'], logsDropped: 0 });
    } finally {
      await api?.close();
    }
  });

  it(`keeps only the last ${JOB_LOG_LINES_KEPT} lines, deleting each one that falls out`, async () => {
    const queue = uniqueQueue('logcap');
    const written = JOB_LOG_LINES_KEPT + 50;
    const { queues, logged } = await workerThat(queue, async (job) => {
      for (let n = 1; n <= written; n++) await job.log(`line ${n}`);
    });
    const id = await queues.enqueue(queue, {});
    await logged;

    const view = await queues.getJob(queue, id);
    expect(view?.logsDropped).toBe(50);
    expect(view?.logs).toHaveLength(JOB_LOG_LINES_KEPT);
    expect(view?.logs[0]).toBe('line 51');
    expect(view?.logs.at(-1)).toBe(`line ${written}`);
    const fields = await redis.hkeys(scriptContext(redis, queue).keys.job(id));
    expect(fields.filter((field) => field.startsWith('g:'))).toHaveLength(JOB_LOG_LINES_KEPT);
  });

  it(`refuses a line over ${JOB_LOG_LINE_MAX_BYTES} bytes (UTF-8) before sending anything`, async () => {
    const { ctx, id, claim } = await claimedJob(uniqueQueue('loglong'));
    // 'é' is two bytes: 512 of them fill a line exactly, 513 are one byte too many.
    expect(await appendJobLog(ctx, claim, 'é'.repeat(512))).toBe(1);
    await expect(appendJobLog(ctx, claim, 'é'.repeat(513))).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(appendJobLog(ctx, claim, 42 as unknown as string)).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    expect(await redis.hget(ctx.keys.job(id), 'gn')).toBe('1');
  });

  it('appends a line once when the same request is repeated', async () => {
    const { ctx, id, claim } = await claimedJob(uniqueQueue('logreplay'));
    expect(await appendJobLog(ctx, claim, 'once', 'log-request-1')).toBe(1);
    expect(await appendJobLog(ctx, claim, 'once', 'log-request-1')).toBe(1);
    expect(await appendJobLog(ctx, claim, 'twice')).toBe(2);
    expect(await redis.hmget(ctx.keys.job(id), 'gn', 'g:1', 'g:2')).toEqual(['2', 'once', 'twice']);
  });

  it('is STALE once the claim is not current: another claimant, or a lease lost to the reaper', async () => {
    const { ctx, id, claim } = await claimedJob(uniqueQueue('logstale'));
    await expect(appendJobLog(ctx, { ...claim, claimant: 'someone-else' }, 'x')).rejects.toBeInstanceOf(
      StaleJobError,
    );
    await backdate(redis, ctx.keys.active, id);
    expect(await reapExpired(ctx, 10)).toMatchObject({ toPending: 1 });
    await expect(appendJobLog(ctx, claim, 'too late')).rejects.toBeInstanceOf(StaleJobError);
    expect(await redis.hget(ctx.keys.job(id), 'gn')).toBeNull();
  });

  it("is STALE in the handler of a removed job, and the lines go with the job's row", async () => {
    const queue = uniqueQueue('loggone');
    const again = deferred<unknown>();
    const { queues, logged, gate } = await workerThat(queue, async (job) => {
      await job.log('before');
    });
    const id = await queues.enqueue(queue, {});
    const job = await logged;
    await expect(queues.remove(queue, id)).resolves.toBe('active');
    again.resolve(await job.log('after').catch((error: unknown) => error));
    gate.resolve();

    expect(await again.promise).toBeInstanceOf(StaleJobError);
    expect(await queues.getJob(queue, id)).toBeUndefined();
    expect(await redis.exists(scriptContext(redis, queue).keys.job(id))).toBe(0);
  });

  it('costs a job view nothing more: a job with lines is read with the same commands as one without', async () => {
    // A Redis of its own, so its command counters move only for these reads.
    const server = await RedisServer.start();
    const own = new Redis(server.url);
    try {
      const ctx = scriptContext(own, uniqueQueue('logcost'));
      const [plain, logged] = [mint(), mint()];
      await enqueueJobs(ctx, [jobRecord(plain), jobRecord(logged)], 60_000);
      const claims = (await claimJobs(ctx, { count: 2, leaseMs: 60_000, claimantPrefix: `cost-${plain}` }))
        .jobs;
      for (const line of ['a', 'b', 'c']) await appendJobLog(ctx, claims[1], line);

      const counters = async (): Promise<Map<string, number>> => {
        const info = await own.info('commandstats');
        return new Map(
          [...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map(([, name, calls]) => [
            name,
            Number(calls),
          ]),
        );
      };
      const delta = (from: Map<string, number>, to: Map<string, number>): Record<string, number> =>
        Object.fromEntries(
          [...to].map(([name, calls]) => [name, calls - (from.get(name) ?? 0)]).filter(([, n]) => n !== 0),
        );
      await readJobView(ctx, plain); // loads the script: later calls are one EVALSHA each
      const before = await counters();
      const plainView = toJobView('q', plain as JobId, await readJobView(ctx, plain));
      const between = await counters();
      const loggedView = toJobView('q', logged as JobId, await readJobView(ctx, logged));
      const after = await counters();

      expect(plainView).toMatchObject({ logs: [], logsDropped: 0 });
      expect(loggedView).toMatchObject({ logs: ['a', 'b', 'c'], logsDropped: 0 });
      expect(delta(between, after)).toEqual(delta(before, between));
      expect(delta(before, between)).toMatchObject({ hgetall: 1 });
    } finally {
      own.disconnect();
      await server.destroy();
    }
  });
});
