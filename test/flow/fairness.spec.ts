import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService } from '@app/echomq';
import { bootApp } from '../support/nest';
import { connect, scriptContext, uniqueQueue } from '../support/redis';
import { closeAll } from '../worker/fixtures/support';
import { enqueueAll, laneJobs } from './support/enqueue-all';
import { dropQueue } from './support/queue-cleanup';
import { idsOfLane, inMintOrder, startOneByOne, tallyByLane } from './support/start-order';

/**
 * Fairness between lanes, read off the claim script one start at a time (what a worker with
 * concurrency 1 sees): stride scheduling gives every backlogged lane one start per round, or
 * starts in proportion to the lanes' weights (docs/flow-control.md).
 */
describe('flow control: fairness between lanes', () => {
  let app: INestApplication;
  let queues: QueueService;
  let redis: Redis;
  const dropped: string[] = [];

  beforeAll(async () => {
    app = await bootApp([]);
    queues = app.get(QueueService);
    redis = connect();
  });
  afterAll(async () => {
    for (const queue of dropped) await dropQueue(redis, queue);
    await redis.quit();
    await closeAll([app]);
  });

  it('starts a small lane behind a 100,000-job lane within one round of its arrival, and each of its jobs within a round of the last', async () => {
    const queue = uniqueQueue('flood');
    dropped.push(queue);
    const ctx = scriptContext(redis, queue);
    const floodIds = await enqueueAll(queues, queue, laneJobs('flood', 100_000));
    const early = await startOneByOne(ctx, 3);
    expect(early.map((job) => job.id)).toEqual(floodIds.slice(0, 3));

    const smallIds = await queues.enqueueMany(queue, laneJobs('small', 10));
    const later = await startOneByOne(ctx, 40);

    // A round serves each non-empty lane once: with 'flood' and 'small' non-empty, a lane
    // waits at most (lanes + 1) = 3 starts for its next one, however deep the other lane is.
    const round = 2 + 1;
    const smallAt = later.flatMap((job, index) => (job.lane === 'small' ? [index + 1] : []));
    expect(smallAt).toHaveLength(10);
    expect(smallAt[0]).toBeLessThanOrEqual(round);
    const gaps = smallAt.slice(1).map((at, index) => at - smallAt[index]);
    expect(gaps.filter((gap) => gap > round)).toEqual([]);

    // First in, first out within each lane.
    expect(idsOfLane(later, 'small')).toEqual(smallIds);
    const floodStarted = idsOfLane([...early, ...later], 'flood');
    expect(floodStarted).toEqual(floodIds.slice(0, floodStarted.length));
    expect(await queues.counts(queue)).toMatchObject({
      pending: 100_000 - floodStarted.length,
      active: early.length + later.length,
    });
  }, 60_000);

  it('shares starts 3:2:1 between backlogged lanes of weights 3, 2 and 1', async () => {
    const queue = uniqueQueue('weights');
    dropped.push(queue);
    await queues.setLane(queue, 'heavy', { weight: 3 });
    await queues.setLane(queue, 'middle', { weight: 2 });
    // 'light' keeps the default weight 1. Every lane has more than it can get in 600 starts.
    await enqueueAll(queues, queue, [
      ...laneJobs('heavy', 350),
      ...laneJobs('middle', 350),
      ...laneJobs('light', 350),
    ]);

    const started = await startOneByOne(scriptContext(redis, queue), 600);
    expect(started).toHaveLength(600);
    const tally = tallyByLane(started);
    expect(tally.heavy).toBeGreaterThanOrEqual(270);
    expect(tally.heavy).toBeLessThanOrEqual(330);
    expect(tally.middle).toBeGreaterThanOrEqual(180);
    expect(tally.middle).toBeLessThanOrEqual(220);
    expect(tally.light).toBeGreaterThanOrEqual(90);
    expect(tally.light).toBeLessThanOrEqual(110);
    for (const lane of ['heavy', 'middle', 'light']) {
      expect(idsOfLane(started, lane)).toEqual(inMintOrder(idsOfLane(started, lane)));
    }
    expect(await queues.lanes(queue)).toEqual([
      expect.objectContaining({ lane: 'heavy', weight: 3, pending: 350 - tally.heavy }),
      expect.objectContaining({ lane: 'light', weight: 1, pending: 350 - tally.light }),
      expect.objectContaining({ lane: 'middle', weight: 2, pending: 350 - tally.middle }),
    ]);
  });

  it('is fair per lane, not per tenant: a tenant spread over 50 lanes gets 50 of every 51 starts', async () => {
    // The designed outcome (docs/flow-control.md): fairness is between LANES. Each backlogged
    // lane gets one start per round, so a tenant whose jobs are spread over 50 lanes gets 50
    // starts per round against a tenant with one lane's 1. Whoever picks the lane key picks
    // the unit of fairness; a tenant that must not outweigh others is given one lane.
    const queue = uniqueQueue('spread');
    dropped.push(queue);
    const spread = Array.from({ length: 50 }, (_, n) => `tenant-a.${String(n).padStart(2, '0')}`);
    // 12 jobs per lane: each is still backlogged after the 10 rounds below.
    await enqueueAll(queues, queue, [
      ...spread.flatMap((lane) => laneJobs(lane, 12)),
      ...laneJobs('tenant-b', 12),
    ]);

    const started = await startOneByOne(scriptContext(redis, queue), 510);
    expect(started).toHaveLength(510);
    const tally = tallyByLane(started);
    // 510 starts = 10 rounds of 51 lanes.
    expect(tally['tenant-b']).toBeGreaterThanOrEqual(9);
    expect(tally['tenant-b']).toBeLessThanOrEqual(11);
    const spreadStarts = spread.reduce((sum, lane) => sum + (tally[lane] ?? 0), 0);
    expect(spreadStarts).toBe(510 - tally['tenant-b']);
    expect(spreadStarts).toBeGreaterThanOrEqual(499);
    // Each of the spread lanes got its one start per round too.
    expect(spread.filter((lane) => Math.abs((tally[lane] ?? 0) - 10) > 1)).toEqual([]);
  });
});
