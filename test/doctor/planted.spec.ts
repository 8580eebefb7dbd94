import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService } from '@app/echomq';
import {
  claimJobs,
  encodeBase62,
  isJobId,
  queueKeys,
  UINT64_MAX,
  type QueueKeys,
} from '@app/echomq/internal';
import { EchoMqTestKit } from '@app/echomq/testing';
import { emq, uniquePrefix } from '../cli/support/cli';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { closeAll, processorClass, serverNow } from '../worker/fixtures/support';
import { checkOnly, doctor, findingsOf, prefixedContext } from './support/doctor';

/**
 * Each test plants one kind of inconsistency with raw Redis commands (keys from the keyspace
 * builder), then: doctor reports it (exit 1) and wrote nothing (every key of the queue dumped
 * before and after), doctor --repair mends it (exit 0), a second doctor finds nothing, and the
 * queue still runs its jobs. No worker claims on its own here (startProcessors: false, so no
 * reaper either): jobs run only in runUntilIdle.
 */
describe('emq doctor on planted inconsistencies', () => {
  const prefix = uniquePrefix();
  const names = Array.from({ length: 13 }, (_, i) => uniqueQueue(`doc${i}`));
  let app: INestApplication;
  let queues: QueueService;
  let kit: EchoMqTestKit;
  let redis: Redis;
  let next = 0;
  let queue: string;
  let keys: QueueKeys;

  beforeAll(async () => {
    const workers = names.map((name) => processorClass(name, {}, () => 'ran'));
    app = await bootApp(workers, { keyPrefix: prefix, startProcessors: false, nodeId: 7 });
    queues = app.get(QueueService);
    kit = EchoMqTestKit.from(app);
    redis = connect();
  });

  beforeEach(() => {
    queue = names[next++];
    keys = queueKeys(queue, prefix);
  });

  afterAll(async () => {
    redis?.disconnect();
    await closeAll([app]);
  });

  /** doctor without --repair on this test's queue: it must write nothing. */
  const check = (...flags: string[]) => checkOnly(redis, prefix, queue, ...flags);

  /** Repairs, checks that a second doctor finds nothing, and returns the repair's findings. */
  async function repairAndRecheck(): Promise<[string, string[], string[]][]> {
    const repaired = await doctor(prefix, queue, '--repair');
    expect(repaired.code).toBe(0);
    expect(repaired.report.healthy).toBe(true);
    for (const finding of repaired.report.queues[0].findings) {
      expect(finding.repaired).toBe(finding.count);
      expect(finding.repair).toEqual(expect.any(String));
    }
    const after = await check();
    expect(findingsOf(after)).toEqual([]);
    expect(after.code).toBe(0);
    return findingsOf(repaired);
  }

  async function runsToCompletion(ids: string[]): Promise<void> {
    const summary = await kit.runUntilIdle(queue);
    expect(
      summary.outcomes
        .filter((o) => o.outcome === 'completed')
        .map((o) => o.id)
        .sort(),
    ).toEqual([...ids].sort());
  }

  it('finds set members without a row and members that are no job ids, and removes them', async () => {
    const [lost, kept] = await queues.enqueueMany(queue, [{ data: 1 }, { data: 2 }]);
    await redis.del(keys.job(lost));
    // Past 2^64-1 (the largest id is JOBLygHa16AHYF): no job id, as isJobId says, so no row key is composed.
    const tooBig = 'JOBLygHa16AHYG';
    expect(isJobId(tooBig)).toBe(false);
    const largest = `JOB${encodeBase62(UINT64_MAX)}`;
    expect(isJobId(largest)).toBe(true);
    await redis.zadd(keys.dead, 0, 'not-a-job', 0, 'JOBzzzzzzzzzzz', 0, tooBig, 0, largest);

    const found = await check();
    expect(found.code).toBe(1);
    expect(found.report.healthy).toBe(false);
    const [malformed, missing] = findingsOf(found);
    expect(malformed[0]).toBe('malformed-member');
    expect([...malformed[1]].sort()).toEqual(['JOBLygHa16AHYG', 'JOBzzzzzzzzzzz', 'not-a-job']);
    expect(missing[0]).toBe('member-without-row');
    expect(Object.fromEntries(missing[1].map((id, i) => [id, missing[2][i]]))).toEqual({
      [lost]: 'in pending',
      [largest]: 'in dead',
    });
    expect(findingsOf(found)).toHaveLength(2);
    expect(await repairAndRecheck()).toEqual(findingsOf(found));
    expect(await redis.zscore(keys.pending, lost)).toBeNull();
    expect(await redis.zcard(keys.dead)).toBe(0);
    await runsToCompletion([kept]);
  });

  it('finds jobs in two sets and keeps each in one: the most advanced, or active while a claim holds it', async () => {
    const [twice, delayed, claimed] = await queues.enqueueMany(queue, [
      { data: 1 },
      { data: 2, delayMs: 600_000 },
      { data: 3 },
    ]);
    // The claim takes the oldest pending job: `twice` first, so it is claimed and given back.
    const ctx = prefixedContext(redis, queue, prefix);
    const batch = await claimJobs(ctx, { count: 3, leaseMs: 600_000, claimantPrefix: 'doctor-spec-claim' });
    expect(batch.jobs.map((job) => job.id)).toEqual([twice, claimed]);
    await redis.zrem(keys.active, twice);
    await redis.hdel(keys.job(twice), 'c');
    await redis.zadd(keys.pending, 0, twice);
    // twice: pending and dead; delayed: schedule and pending; claimed: active (claimed) and pending.
    await redis.zadd(keys.dead, 0, twice);
    await redis.zadd(keys.pending, 0, delayed, 0, claimed);

    const found = await check();
    expect(found.code).toBe(1);
    const [[kind, ids, details], index] = findingsOf(found);
    expect(kind).toBe('in-two-sets');
    expect(Object.fromEntries(ids.map((id, i) => [id, details[i]]))).toEqual({
      [twice]: 'in pending, dead: keeps dead',
      [delayed]: 'in pending, schedule: keeps pending',
      [claimed]: 'in pending, active: keeps active',
    });
    // The claim emptied pending, so the default lane left ready; the ZADDs by hand did not offer it.
    expect(index).toEqual(['lane-index', ['default@0'], ['unindexed']]);
    expect(findingsOf(found)).toHaveLength(2);

    const [[, repairedIds, repairedDetails]] = await repairAndRecheck();
    expect(repairedIds.sort()).toEqual([twice, delayed, claimed].sort());
    expect(repairedDetails).toContain('in pending, dead: kept dead');
    expect((await queues.getJob(queue, twice))?.state).toBe('dead');
    expect((await queues.getJob(queue, claimed))?.state).toBe('active');
    await redis.zadd(keys.active, 1, claimed); // its claimant is this test: let the reap below return it
    await doctor(prefix, queue, '--repair');
    expect((await emq(prefix, ['retry', queue, twice])).code).toBe(0);
    await runsToCompletion([twice, delayed, claimed]);
  });

  it('never keeps a job in active when its row has no claimant: it leaves active and its lane count', async () => {
    await queues.setLane(queue, 'solo', { concurrency: 1 }); // a cap: lane-active counts the lane
    const id = await queues.enqueue(queue, 1, { lane: 'solo' });
    const ctx = prefixedContext(redis, queue, prefix);
    const claim = await claimJobs(ctx, {
      count: 1,
      leaseMs: 600_000,
      claimantPrefix: 'doctor-spec-unclaimed',
    });
    expect(claim.jobs.map((job) => job.id)).toEqual([id]);
    expect(await redis.hget(keys.laneActive, 'solo')).toBe('1');
    // The row lost its claimant, and the id is back in its pending set: no claim holds it any more.
    await redis.hdel(keys.job(id), 'c');
    await redis.zadd(keys.pendingOf('solo', 0), 0, id);

    const found = await check();
    expect(found.code).toBe(1);
    expect(findingsOf(found)).toEqual([
      ['in-two-sets', [id], ['in pending, active: keeps pending']],
      ['lane-index', ['solo@0'], ['unindexed']],
    ]);
    const repaired = await repairAndRecheck();
    expect(repaired[0]).toEqual(['in-two-sets', [id], ['in pending, active: kept pending']]);
    expect(await redis.zscore(keys.active, id)).toBeNull();
    // Counted out of its lane as it left active: the cap no longer holds the lane back.
    expect(await redis.hget(keys.laneActive, 'solo')).toBeNull();
    await runsToCompletion([id]);
  });

  it("finds a pending job in another lane's set, and the lane indexes that no longer match", async () => {
    const id = await queues.enqueue(queue, 1, { lane: 'home' });
    await redis.zrem(keys.pendingOf('home', 0), id);
    await redis.zadd(keys.pendingOf('elsewhere', 0), 0, id);

    const found = await check();
    expect(found.code).toBe(1);
    const byKind = Object.fromEntries(
      findingsOf(found).map(([kind, ids, details]) => [kind, { ids, details }]),
    );
    expect(byKind['wrong-pending-set']).toEqual({
      ids: [id],
      details: ['in pending:0:elsewhere: keeps pending'],
    });
    // Its row is outside its own lane's set, but another pending set holds it: no orphan (a
    // repair as an orphan would put it in a second pending set).
    expect(byKind['lane-index'].ids.sort()).toEqual(['elsewhere@0', 'home@0']);
    expect(Object.keys(byKind).sort()).toEqual(['lane-index', 'wrong-pending-set']);

    // Moved home, the job is offered there, and the emptied set leaves the index: one repair mends both.
    expect(await repairAndRecheck()).toEqual([
      ['wrong-pending-set', [id], ['in pending:0:elsewhere: kept pending']],
    ]);
    expect(await redis.zscore(keys.pendingOf('home', 0), id)).toBe('0');
    expect(await redis.exists(keys.pendingOf('elsewhere', 0))).toBe(0);
    await runsToCompletion([id]);
  });

  it('finds rows of unfinished jobs in no set, and puts them back: pending, or dead with the budget spent', async () => {
    const [lost, spent] = await queues.enqueueMany(queue, [{ data: 1 }, { data: 2 }]);
    await redis.zrem(keys.pending, lost, spent);
    await redis.hset(keys.job(spent), 'a', 3); // three attempts of the built-in three: spent

    const found = await check();
    expect(found.code).toBe(1);
    const [orphans, index] = findingsOf(found);
    expect(orphans[0]).toBe('orphan-row');
    expect(Object.fromEntries(orphans[1].map((id, i) => [id, orphans[2][i]]))).toEqual({
      [lost]: 'goes to pending',
      [spent]: 'goes to dead',
    });
    expect(index).toEqual(['lane-index', ['default@0'], ['indexed-without-work']]);

    await repairAndRecheck();
    expect((await queues.getJob(queue, spent))?.state).toBe('dead');
    await runsToCompletion([lost]);
  });

  it('finds leases no reaper returned and reaps them', async () => {
    const id = await queues.enqueue(queue, 1);
    const ctx = prefixedContext(redis, queue, prefix);
    await claimJobs(ctx, { count: 1, leaseMs: 600_000, claimantPrefix: 'doctor-spec-lease' });
    // The worker holding it died: its lease deadline passed ten minutes ago, and no reaper ran since.
    await redis.zadd(keys.active, 'XX', (await serverNow(redis)) - 600_000, id);

    const within = await check('--grace', '3600000');
    expect(within).toMatchObject({ code: 0 });
    const found = await check();
    expect(found.code).toBe(1);
    expect(findingsOf(found)).toEqual([
      ['lease-expired', [id], [expect.stringMatching(/^expired \d+ ms ago$/)]],
    ]);

    await repairAndRecheck();
    expect((await queues.getJob(queue, id))?.state).toBe('pending');
    await runsToCompletion([id]);
  });

  it('finds a lane with work that ready and held do not name, and offers it', async () => {
    const id = await queues.enqueue(queue, 1, { lane: 'forgotten', priority: 4 });
    await redis.zrem(keys.ready(4), 'forgotten');

    const found = await check();
    expect(found.code).toBe(1);
    expect(findingsOf(found)).toEqual([['lane-index', ['forgotten@4'], ['unindexed']]]);
    await repairAndRecheck();
    await runsToCompletion([id]);
  });

  it('finds a lane count that holds its lane at its cap with nothing active, and recounts it', async () => {
    await queues.setLane(queue, 'capped', { concurrency: 1 });
    await redis.hset(keys.laneActive, 'capped', 1);
    const id = await queues.enqueue(queue, 1, { lane: 'capped' });
    // The phantom count keeps the lane at its cap: a claim takes nothing from it.
    const ctx = prefixedContext(redis, queue, prefix);
    const blocked = await claimJobs(ctx, {
      count: 1,
      leaseMs: 600_000,
      claimantPrefix: 'doctor-spec-capped',
    });
    expect(blocked.jobs).toEqual([]);
    expect(await queues.counts(queue)).toMatchObject({ pending: 1, active: 0 });

    const found = await check();
    expect(found.code).toBe(1);
    expect(findingsOf(found)).toEqual([['lane-active', ['capped'], ['stored 1, recounted 0']]]);
    await repairAndRecheck();
    await runsToCompletion([id]);
  });

  it('finds lane lists that disagree with the lane settings and with the held lanes', async () => {
    await redis.sadd(keys.configuredLanes, 'ghost');
    await redis.hset(keys.laneSettings('unlisted'), 'w', 2);
    const id = await queues.enqueue(queue, 1, { lane: 'hushed' });
    await redis.sadd(keys.pausedLanes, 'hushed'); // paused by hand: still ready, so a claim would serve it

    const found = await check();
    expect(found.code).toBe(1);
    const [[kind, ids, details]] = findingsOf(found);
    expect(kind).toBe('lane-lists');
    expect(Object.fromEntries(ids.map((lane, i) => [lane, details[i]]))).toEqual({
      ghost: 'configured-without-settings',
      unlisted: 'settings-not-listed',
      hushed: 'paused-not-held',
    });
    await repairAndRecheck();
    expect(await queues.lanes(queue)).toEqual([
      expect.objectContaining({ lane: 'hushed', pending: 1, paused: true, held: true }),
      expect.objectContaining({ lane: 'unlisted', weight: 2 }),
    ]);
    expect((await emq(prefix, ['resume', queue, '--lane', 'hushed'])).code).toBe(0);
    await runsToCompletion([id]);
  });

  it('lists the first --ids of a finding and counts them all', async () => {
    const ids = await queues.enqueueMany(queue, [{ data: 1 }, { data: 2 }, { data: 3 }]);
    for (const id of ids) await redis.del(keys.job(id));
    const found = await check('--ids', '2');
    expect(found.report.queues[0].findings).toEqual([
      expect.objectContaining({ kind: 'member-without-row', count: 3, ids: expect.any(Array) }),
    ]);
    expect(found.report.queues[0].findings[0].ids).toHaveLength(2);
    const text = await emq(prefix, ['doctor', queue, '--ids', '1']);
    expect(text.stdout).toContain('and 2 more');
    await repairAndRecheck();
  });

  it('leaves index entries that name no lane alone, and says it did not check them', async () => {
    await queues.enqueue(queue, 1);
    await redis.zadd(keys.ready(2), 0, 'not a lane');
    const found = await check();
    expect(found.code).toBe(0);
    expect(findingsOf(found)).toEqual([]);
    expect(found.report.queues[0].unchecked).toEqual([
      { check: 'lane indexes and lists', reason: expect.stringMatching(/^1 entries of ready/) },
    ]);
    await redis.zrem(keys.ready(2), 'not a lane');
  });

  it('leaves a queue written in a newer data format alone, and says so', async () => {
    const id = await queues.enqueue(queue, 1);
    await redis.del(keys.job(id)); // would be a finding, were the queue's format one this code knows
    await redis.set(keys.format, '99');
    const found = await doctor(prefix, queue, '--repair');
    // Nothing found, but a queue not checked: exit 3, and the report is neither complete nor healthy.
    expect(found.code).toBe(3);
    expect(found.report).toMatchObject({ complete: false, healthy: false });
    expect(found.report.queues).toEqual([
      expect.objectContaining({
        queue,
        checked: false,
        findings: [],
        unchecked: [{ check: 'every check', reason: expect.stringContaining('data format 99') }],
      }),
    ]);
    expect(await redis.zscore(keys.pending, id)).toBe('0');
    await redis.set(keys.format, '1');
    await repairAndRecheck();
  });

  it('without a queue, checks every known queue; a text report names each finding', async () => {
    const id = await queues.enqueue(queue, 1);
    await redis.del(keys.job(id));
    const all = await doctor(prefix, undefined);
    expect(all.code).toBe(1);
    const broken = all.report.queues.filter((q) => q.findings.length > 0).map((q) => q.queue);
    expect(broken).toEqual([queue]);
    expect(all.report.queues.map((q) => q.queue)).toEqual(expect.arrayContaining(names.slice(0, next)));
    expect(all.report.unchecked.length).toBeGreaterThan(0);

    const text = await emq(prefix, ['doctor', queue]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('member-without-row');
    expect(text.stdout).toContain(id);
    expect(text.stdout).toContain('Not checked:');
    const repaired = await emq(prefix, ['doctor', queue, '--repair']);
    expect(repaired.code).toBe(0);
    expect(repaired.stdout).toContain('1 repaired:');
    expect(repaired.stdout).toContain('removed from their');
  });
});
