import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService, type JobToEnqueue } from '@app/echomq';
import { claimJobs, enqueueJobs, readLanes, reapExpired, writeLimits } from '@app/echomq/internal';
import { backdate, jobRecord } from '../support/assertions';
import { bootApp } from '../support/nest';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { closeAll } from '../worker/fixtures/support';
import { ConcurrencyProbe, WHOLE_QUEUE } from './support/concurrency-probe';
import { FlowChild } from './support/flow-child';

/** Simulated work per job: long enough that the handlers of one claim overlap. */
const WORK_MS = 25;
const LANE_CAP = 2;
const GLOBAL_CAP = 3;
const LANES = ['l1', 'l2', 'l3'];
const WORKER_NAMES = ['worker-a', 'worker-b'];

function jobsInLanes(perLane: number): JobToEnqueue<number>[] {
  const jobs: JobToEnqueue<number>[] = [];
  for (let n = 0; n < perLane; n++) for (const lane of LANES) jobs.push({ data: n, lane });
  return jobs;
}

/**
 * Caps held by Redis for every worker together: two worker PROCESSES (fixtures/flow-worker.ts)
 * serve the same queues, and their handlers mark start and end on server-side counters, so the
 * most jobs ever running at once is read exactly, across processes.
 */
describe('flow control: concurrency caps across worker processes', () => {
  let producer: INestApplication;
  let queues: QueueService;
  let redis: Redis;
  let children: FlowChild[] = [];
  const laneQueue = uniqueQueue('lanecap');
  const globalQueue = uniqueQueue('globalcap');

  beforeAll(async () => {
    producer = await bootApp([]);
    queues = producer.get(QueueService);
    redis = connect();
    // The global cap is an admin setting (setLimits); the lane cap comes from the workers'
    // own @Processor options, written to Redis when they boot. Both end up in one place.
    await queues.setLimits(globalQueue, { globalConcurrency: GLOBAL_CAP });
    children = WORKER_NAMES.map((name) =>
      FlowChild.spawn(name, [
        { queue: laneQueue, options: { concurrency: 4, laneConcurrency: LANE_CAP }, workMs: WORK_MS },
        { queue: globalQueue, options: { concurrency: 3 }, workMs: WORK_MS },
      ]),
    );
    await Promise.all(children.map((child) => child.ready()));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(children.map((child) => child.stop()));
    await redis.quit();
    await closeAll([producer]);
  });

  it('never runs more than laneConcurrency jobs of one lane at once, over both processes, and completes every job', async () => {
    expect(await queues.getLimits(laneQueue)).toMatchObject({ laneConcurrency: LANE_CAP });
    // Two processes of concurrency 4 could run 8 at once; three lanes of cap 2 allow 6.
    const ids = await queues.enqueueMany(laneQueue, jobsInLanes(8));
    const servedBy = await Promise.all(ids.map((id) => queues.waitFor<string>(laneQueue, id, 20_000)));

    const probe = new ConcurrencyProbe(redis, laneQueue);
    const mostPerLane = await Promise.all(LANES.map((lane) => probe.maxSeen(lane)));
    expect(mostPerLane.filter((most) => most > LANE_CAP)).toEqual([]);
    // The cap was reached (so a breach could have shown), and the lanes ran side by side.
    expect(Math.max(...mostPerLane)).toBe(LANE_CAP);
    expect(await probe.maxSeen(WHOLE_QUEUE)).toBeGreaterThan(LANE_CAP);

    expect(new Set(servedBy)).toEqual(new Set(WORKER_NAMES));
    expect(await probe.startsByWorker()).toEqual({
      'worker-a': expect.any(Number),
      'worker-b': expect.any(Number),
    });
    expect(await queues.counts(laneQueue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    expect(await queues.metrics(laneQueue)).toMatchObject({ claimed: ids.length, completed: ids.length });
    // Every lane's count of active jobs went back to nothing: no lane is left listed.
    expect(await queues.lanes(laneQueue)).toEqual([]);
  });

  it('never runs more than globalConcurrency jobs of the queue at once, over both processes', async () => {
    expect(await queues.getLimits(globalQueue)).toMatchObject({ globalConcurrency: GLOBAL_CAP });
    // Two processes of concurrency 3 could run 6 at once.
    const ids = await queues.enqueueMany(
      globalQueue,
      Array.from({ length: 24 }, (_, n) => ({ data: n })),
    );
    const servedBy = await Promise.all(ids.map((id) => queues.waitFor<string>(globalQueue, id, 20_000)));

    const probe = new ConcurrencyProbe(redis, globalQueue);
    expect(await probe.maxSeen(WHOLE_QUEUE)).toBe(GLOBAL_CAP);
    expect(await probe.runningNow(WHOLE_QUEUE)).toBe(0);
    expect(new Set(servedBy)).toEqual(new Set(WORKER_NAMES));
    expect(await queues.counts(globalQueue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
  });

  it("gives a reaped lane-capped job's slot back: the lane's next job is claimable again", async () => {
    // Script level, on a queue no reaper knows (enqueueJobs does not register it), so only
    // this test's reap moves the expired lease.
    const ctx = scriptContext(redis, uniqueQueue('lanereap'));
    const mint = idMinter(23);
    await writeLimits(ctx, { laneConcurrency: LANE_CAP });
    const ids = Array.from({ length: 3 }, () => mint());
    await enqueueJobs(
      ctx,
      ids.map((id) => jobRecord(id, { lane: 'x' })),
      60_000,
    );
    const claim = (prefix: string) => claimJobs(ctx, { count: 3, leaseMs: 60_000, claimantPrefix: prefix });

    expect((await claim('first')).jobs.map((job) => job.id)).toEqual(ids.slice(0, 2));
    expect((await claim('capped')).jobs).toEqual([]);

    await backdate(redis, ctx.keys.active, ids[0]);
    expect(await reapExpired(ctx, 100)).toEqual({ toPending: 1, toDead: 0, more: false });
    expect(await readLanes(ctx)).toEqual([expect.objectContaining({ lane: 'x', active: 1, pending: 2 })]);

    // One slot came back: the reaped job (first in its lane) starts again, on attempt 2, and
    // the cap still holds the third job back.
    const again = await claim('after-reap');
    expect(again.jobs.map((job) => [job.id, job.attempt])).toEqual([[ids[0], 2]]);
    expect(await readLanes(ctx)).toEqual([expect.objectContaining({ lane: 'x', active: 2, pending: 1 })]);
  });
});
