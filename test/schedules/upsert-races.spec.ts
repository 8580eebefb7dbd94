import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import {
  QueueService,
  buildDefinition,
  claimJobs,
  promoteDue,
  queueKeys,
  upsertScheduleScript,
} from '@app/echomq/internal';
import { serverNowMs } from '../support/assertions';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { makeOverdue } from './support/downtime';
import { expectScheduleInvariants } from './support/schedule-invariants';

const PAYLOAD_LIMIT = 1_000_000;
const MINUTE = 60_000;

/**
 * upsert-schedule against the places the next occurrence may be in when the script runs, not
 * when its caller last looked: a due run advanced meanwhile, a run in progress, a lost reply.
 */
describe('schedules: upsert while the next occurrence moves', () => {
  let app: INestApplication;
  let queues: QueueService;
  let redis: Redis;
  let queue: string;

  beforeAll(async () => {
    app = await bootApp([]);
    queues = app.get(QueueService);
    redis = connect();
  });
  afterAll(async () => {
    await app.close();
    await redis.quit();
  });
  beforeEach(() => {
    queue = uniqueQueue('sched-race');
  });
  afterEach(async () => expectScheduleInvariants(redis, queue));

  const keys = () => queueKeys(queue);
  const text = (data: unknown) => buildDefinition({ everyMs: MINUTE }, { data }, PAYLOAD_LIMIT).text;
  const claimOne = async () =>
    (await claimJobs(queues.context(queue), { count: 1, leaseMs: 30_000, claimantPrefix: 'race' })).jobs;

  it('a template change racing a due run keeps the slot of the run that waits then (no slot runs twice)', async () => {
    const ctx = queues.context(queue);
    const first = await queues.upsertSchedule(queue, 'race', { everyMs: MINUTE }, { data: 'A' });
    // A caller changing the template reads the waiting O1 and its slot S...
    const slot = await makeOverdue(redis, queue, first.nextId, 10);
    // ...meanwhile O1 is claimed and the claim's advance makes O2 at S + period...
    expect((await claimOne()).map((job) => job.id)).toEqual([first.nextId]);
    expect(await queues.advanceSchedule(queue, 'race', first.nextId)).toBe('advanced');
    const o2 = (await queues.getSchedule(queue, 'race'))!;
    expect(o2.nextRunAt!.getTime()).toBe(slot + MINUTE);
    // ...then its script runs with the run-at it read: S is not reused, O2's slot is kept.
    const id = 'JOB0000000000R';
    const reply = await upsertScheduleScript(ctx, { key: 'race', definition: text('B'), id, runAtMs: slot });
    expect(reply).toEqual({ outcome: 'updated', id, runAtMs: slot + MINUTE });
    expect(await redis.zrange(keys().schedule, 0, -1, 'WITHSCORES')).toEqual([id, String(slot + MINUTE)]);
    expect(await redis.hmget(keys().job(id), 'd', 'sa')).toEqual(['"B"', String(slot + MINUTE)]);
    expect(await redis.exists(keys().job(o2.nextId!))).toBe(0);
    // Nothing of this schedule is due now: slot S ran once.
    expect(await redis.zrangebyscore(keys().schedule, '-inf', await serverNowMs(redis))).toEqual([]);
    await redis.del(keys().active, keys().job(first.nextId));
  });

  it('keeps a waiting run-at only for the same timing; new timing starts from now', async () => {
    const first = await queues.upsertSchedule(queue, 'timing', { everyMs: MINUTE }, { data: 1 });
    const id = 'JOB0000000000T';
    const other = buildDefinition({ everyMs: 2 * MINUTE }, { data: 1 }, PAYLOAD_LIMIT).text;
    const runAtMs = (await serverNowMs(redis)) + 2 * MINUTE;
    const reply = await upsertScheduleScript(queues.context(queue), {
      key: 'timing',
      definition: other,
      id,
      runAtMs,
    });
    expect(reply).toEqual({ outcome: 'updated', id, runAtMs });
    expect(runAtMs).not.toBe(first.nextRunAt.getTime());
  });

  it("the same definition while its run is pending or claimed is 'unchanged' and writes nothing", async () => {
    const ctx = queues.context(queue);
    const spec = { everyMs: MINUTE };
    const first = await queues.upsertSchedule(queue, 'busy', spec, { data: 1 });
    const planned = await makeOverdue(redis, queue, first.nextId, 10);
    await promoteDue(ctx, 10);
    const unchanged = { outcome: 'unchanged', nextId: first.nextId, nextRunAt: new Date(planned) };
    const [[mark]] = (await redis.xrevrange(keys().events, '+', '-', 'COUNT', 1)) as [string, string[]][];
    // Pending (promoted, nobody claimed it yet): a boot of the fleet upserts it again.
    expect(await queues.upsertSchedule(queue, 'busy', spec, { data: 1 })).toEqual(unchanged);
    // Claimed, its advance not yet made.
    expect((await claimOne()).map((job) => job.id)).toEqual([first.nextId]);
    expect(await queues.upsertSchedule(queue, 'busy', spec, { data: 1 })).toEqual(unchanged);
    expect(await redis.zcard(keys().schedule)).toBe(0);
    const since = (await redis.xrange(keys().events, `(${mark}`, '+')).map(
      ([, f]) => f[f.indexOf('type') + 1],
    );
    expect(since.filter((type) => type.startsWith('schedule') || type === 'enqueued')).toEqual([]);
    // The advance still matches: the phase is kept.
    expect(await queues.advanceSchedule(queue, 'busy', first.nextId)).toBe('advanced');
    expect((await queues.getSchedule(queue, 'busy'))!.nextRunAt!.getTime()).toBe(planned + MINUTE);
    await redis.del(keys().active, keys().job(first.nextId));
  });

  it("a changed template while a run is in progress is stored for that run's advance, nothing else", async () => {
    const first = await queues.upsertSchedule(queue, 'swap', { everyMs: MINUTE }, { data: 'old' });
    const planned = await makeOverdue(redis, queue, first.nextId, 10);
    await claimOne();
    const changed = await queues.upsertSchedule(queue, 'swap', { everyMs: MINUTE }, { data: 'new' });
    expect(changed).toEqual({ outcome: 'updated', nextId: first.nextId, nextRunAt: new Date(planned) });
    expect(await redis.zcard(keys().schedule)).toBe(0);
    expect(await queues.advanceSchedule(queue, 'swap', first.nextId)).toBe('advanced');
    const view = (await queues.getSchedule(queue, 'swap'))!;
    expect(await redis.hget(keys().job(view.nextId!), 'd')).toBe('"new"');
    expect(view.nextRunAt!.getTime()).toBe(planned + MINUTE);
    await redis.del(keys().active, keys().job(first.nextId));
  });

  it("records an 'unchanged' reply: repeated after a newer upsert, it does not write the older definition", async () => {
    const ctx = queues.context(queue);
    const runAtMs = (await serverNowMs(redis)) + MINUTE;
    const [a, b] = [text('A'), text('B')];
    await upsertScheduleScript(ctx, { key: 'k', definition: a, id: 'JOB0000000000A', runAtMs }, 'req-first');
    // P1 upserts A again: 'unchanged', and its reply is lost.
    const p1 = { key: 'k', definition: a, id: 'JOB0000000000B', runAtMs };
    const lost = await upsertScheduleScript(ctx, p1, 'req-p1');
    expect(lost).toEqual({ outcome: 'unchanged', id: 'JOB0000000000A', runAtMs });
    // P2 changes it to B.
    const p2 = await upsertScheduleScript(ctx, { ...p1, definition: b, id: 'JOB0000000000C' }, 'req-p2');
    expect(p2.outcome).toBe('updated');
    // P1 repeats under its request id: its first answer, and B stays.
    expect(await upsertScheduleScript(ctx, p1, 'req-p1')).toEqual(lost);
    expect(await redis.hget(keys().schedulers, 'k')).toBe(b);
    expect(await redis.zrange(keys().schedule, 0, -1)).toEqual(['JOB0000000000C']);
  });
});
