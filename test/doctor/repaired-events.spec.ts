import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService, QUEUE_EVENT_TYPES } from '@app/echomq';
import type { RepairedEvent } from '@app/echomq/events/queue-event-payloads';
import { diagnoseQueue, FINDING_KINDS } from '@app/echomq/doctor';
import { claimJobs, parseQueueEvent, queueKeys } from '@app/echomq/internal';
import { parseEntry } from '@app/echomq/events/queue-event';
import { uniquePrefix } from '../cli/support/cli';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { closeAll } from '../worker/fixtures/support';
import { dumpQueue, prefixedContext } from './support/doctor';

/**
 * A repair moves jobs between states like any transition, so it appends its event in the same
 * script call: a follower of the stream sees the move instead of drifting until its next read.
 */
describe("the doctor's repairs write 'repaired' events", () => {
  const prefix = uniquePrefix();
  let app: INestApplication;
  let queues: QueueService;
  let redis: Redis;

  beforeAll(async () => {
    app = await bootApp([], { keyPrefix: prefix, startProcessors: false, nodeId: 15 });
    queues = app.get(QueueService);
    redis = connect();
  });

  afterAll(async () => {
    redis?.disconnect();
    await closeAll([app]);
  });

  it('is an event type of the stream, typed with its kind, count, ids, where each went, and lanes', () => {
    expect(QUEUE_EVENT_TYPES).toContain('repaired');
    const event = parseQueueEvent(
      'q',
      parseEntry('1700000000000-0', [
        'type',
        'repaired',
        'kind',
        'orphan-row',
        'count',
        '2',
        'ids',
        'JOB0000000000A,JOB0000000000B',
        'to',
        'pending,dead',
        'lanes',
        '',
      ]),
    ) as RepairedEvent;
    expect(event).toMatchObject({
      type: 'repaired',
      kind: 'orphan-row',
      count: 2,
      ids: ['JOB0000000000A', 'JOB0000000000B'],
      to: ['pending', 'dead'],
      lanes: [],
    });
  });

  it('names every kind it mended, the jobs and where each is now, or the lanes; a check or a second repair writes none', async () => {
    const queue = uniqueQueue('events');
    const keys = queueKeys(queue, prefix);
    const ctx = prefixedContext(redis, queue, prefix);
    const far = await queues.enqueue(queue, 0);
    await claimJobs(ctx, {
      count: 1,
      leaseMs: 600_000,
      claimantPrefix: `events-spec-${randomBytes(4).toString('hex')}`,
    });
    await redis.zadd(keys.active, 'XX', '+inf', far);
    const [lost, twice, orphan] = await queues.enqueueMany(queue, [{ data: 1 }, { data: 2 }, { data: 3 }]);
    await redis.del(keys.job(lost));
    await redis.zadd(keys.dead, 0, twice, 0, 'not-a-job');
    await redis.zrem(keys.pending, orphan);
    const moved = await queues.enqueue(queue, 4, { lane: 'home' });
    await redis.zrem(keys.pendingOf('home', 0), moved);
    await redis.zadd(keys.pendingOf('elsewhere', 0), 0, moved);
    await queues.enqueue(queue, 5, { lane: 'forgotten', priority: 4 });
    await redis.zrem(keys.ready(4), 'forgotten');
    await redis.sadd(keys.configuredLanes, 'ghost');
    await redis.hset(keys.laneActive, 'phantom', 1);

    const before = await dumpQueue(redis, keys);
    await diagnoseQueue(ctx);
    expect(await dumpQueue(redis, keys)).toEqual(before);

    const since = (await redis.xrevrange(keys.events, '+', '-', 'COUNT', 1))[0][0];
    const repaired = await diagnoseQueue(ctx, { repair: true });
    expect(repaired.findings.every((finding) => finding.repaired === finding.count)).toBe(true);
    const written = (await redis.xrange(keys.events, `(${since}`, '+'))
      .map(([id, flat]) => parseQueueEvent(queue, parseEntry(id, flat)))
      .filter((event): event is RepairedEvent => event.type === 'repaired');
    const byKind = Object.fromEntries(
      written.map((event) => [
        event.kind,
        { count: event.count, ids: event.ids, to: event.to, lanes: event.lanes },
      ]),
    );
    expect(byKind).toEqual({
      'member-without-row': { count: 1, ids: [lost], to: ['gone'], lanes: [] },
      'malformed-member': { count: 1, ids: [], to: [], lanes: [] },
      'in-two-sets': { count: 1, ids: [twice], to: ['dead'], lanes: [] },
      'wrong-pending-set': { count: 1, ids: [moved], to: ['pending'], lanes: [] },
      'orphan-row': { count: 1, ids: [orphan], to: ['pending'], lanes: [] },
      'lease-far-future': { count: 1, ids: [far], to: ['active'], lanes: [] },
      'lane-index': { count: 1, ids: [], to: [], lanes: ['forgotten@4'] },
      'lane-lists': { count: 1, ids: [], to: [], lanes: ['ghost'] },
      'lane-active': { count: 1, ids: [], to: [], lanes: ['phantom'] },
    });
    expect(written).toHaveLength(9);
    for (const event of written) expect(FINDING_KINDS).toContain(event.kind);
    expect(Number(await redis.hget(keys.metrics, 'repaired'))).toBe(9);

    const after = await dumpQueue(redis, keys);
    const again = await diagnoseQueue(ctx, { repair: true });
    expect(again.findings).toEqual([]);
    expect(await dumpQueue(redis, keys)).toEqual(after);
  });
});
