import { randomBytes } from 'node:crypto';
import { diagnoseQueue } from '@app/echomq/doctor';
import { claimJobs } from '@app/echomq/internal';
import {
  ORPHAN_RECHECK_LOOKUPS_MAX,
  ORPHAN_RECHECK_SETS_MAX,
  repairOrphans,
} from '@app/echomq/scripts/repair-orphans';
import { events } from '../support/assertions';
import { doctorBench } from './support/doctor-bench';
import { checkOnly, doctor, dumpQueue } from './support/doctor';

/**
 * Invariant 1 under repair: a row outside its own pending set but inside another lane's is a
 * misplaced job, not an orphan. Repairing it as an orphan would put the id in a second pending
 * set, from which a second claim takes it while the first holder still runs it.
 */
describe('the orphan repair never puts a job in a second set', () => {
  const bench = doctorBench('orph', 12);

  /** Claims until nothing is left; every id each claim returned, in order. */
  async function claimEverything(): Promise<string[]> {
    const claimed: string[] = [];
    for (;;) {
      const batch = await claimJobs(bench.ctx, {
        count: 500,
        leaseMs: 600_000,
        claimantPrefix: `orphans-spec-${randomBytes(4).toString('hex')}`,
      });
      if (batch.jobs.length === 0) return claimed;
      claimed.push(...batch.jobs.map((job) => job.id));
    }
  }

  /** A job of lane `home` moved by hand into `elsewhere`'s pending set at level 0. */
  async function misplaced(elsewhere: string): Promise<string> {
    const id = await bench.queues.enqueue(bench.queue, 1, { lane: 'home' });
    await bench.redis.zrem(bench.keys.pendingOf('home', 0), id);
    await bench.redis.zadd(bench.keys.pendingOf(elsewhere, 0), 0, id);
    return id;
  }

  it("leaves alone a row that another lane's indexed pending set holds: nothing written, one claim gets the job", async () => {
    const id = await misplaced('elsewhere');
    await bench.redis.zrem(bench.keys.ready(0), 'home');
    await bench.redis.zadd(bench.keys.ready(0), 0, 'elsewhere'); // elsewhere is claimable: a second copy in home would be too
    const before = await dumpQueue(bench.redis, bench.keys);
    expect(await repairOrphans(bench.ctx, 'repair', [id])).toEqual([]);
    expect(await dumpQueue(bench.redis, bench.keys)).toEqual(before);

    const claimed = await claimEverything();
    expect(claimed).toEqual([id]);
  });

  it('looks in the pending sets held names too, and in the sets it is given; an unindexed set it is not given it cannot see', async () => {
    const held = await misplaced('paused-one');
    await bench.redis.hset(bench.keys.held, 'paused-one', '0');
    expect(await repairOrphans(bench.ctx, 'check', [held])).toEqual([]);

    const hidden = await misplaced('nowhere'); // named by neither ready nor held
    expect(await repairOrphans(bench.ctx, 'check', [hidden])).toEqual([{ id: hidden, to: 'pending' }]);
    expect(await repairOrphans(bench.ctx, 'check', [hidden], [{ lane: 'nowhere', level: 0 }])).toEqual([]);
    // The doctor reads every pending set by SCAN first, so it never judges that row an orphan.
    const found = await checkOnly(bench.redis, bench.prefix, bench.queue);
    const kinds = found.report.queues[0].findings.map((finding) => finding.kind);
    expect(kinds).toContain('wrong-pending-set');
    expect(kinds).not.toContain('orphan-row');
  });

  it('finds misplaced jobs as wrong-pending-set, never as orphans, in a bench.queue whose rows span many batches; after the repair each job is claimed once', async () => {
    // 1,000 jobs: rows are judged 200 a call while the SCAN goes on, and ten jobs sit in lane
    // sets no index names, each reached by SCAN at a moment unrelated to its row.
    const ids: string[] = [];
    for (let at = 0; at < 5; at++) {
      ids.push(
        ...(await bench.queues.enqueueMany(
          bench.queue,
          Array.from({ length: 200 }, (_, n) => ({ data: n })),
        )),
      );
    }
    const moved: string[] = [];
    for (let i = 0; i < 10; i++) moved.push(await misplaced(`elsewhere-${i}`));

    const found = await checkOnly(bench.redis, bench.prefix, bench.queue);
    expect(found.code).toBe(1);
    const byKind = Object.fromEntries(found.report.queues[0].findings.map((f) => [f.kind, f]));
    expect(Object.keys(byKind).sort()).toEqual(['lane-index', 'wrong-pending-set']);
    expect(byKind['wrong-pending-set']).toMatchObject({ count: 10 });
    expect(found.report.queues[0].scanned.rows).toBe(1_010);

    const repaired = await doctor(bench.prefix, bench.queue, '--repair');
    expect(repaired.code).toBe(0);
    // (moved home, each job offers its lane there again: the index needs no repair of its own)
    expect(repaired.report.queues[0].findings.map((finding) => [finding.kind, finding.repaired])).toEqual([
      ['wrong-pending-set', 10],
    ]);
    for (const id of moved) expect(await bench.redis.zscore(bench.keys.pendingOf('home', 0), id)).toBe('0');

    const claimed = await claimEverything();
    expect(claimed).toHaveLength(new Set(claimed).size);
    expect([...claimed].sort()).toEqual([...ids, ...moved].sort());
  });

  it('judges no orphan when the index names too many pending sets to look in: unverified, nothing written', async () => {
    const id = await bench.queues.enqueue(bench.queue, 1);
    await bench.redis.zrem(bench.keys.pending, id);
    const lanes = Array.from({ length: ORPHAN_RECHECK_SETS_MAX }, (_, i) => [0, `idle-${i}`]).flat();
    await bench.redis.zadd(bench.keys.ready(0), ...lanes);
    const before = await dumpQueue(bench.redis, bench.keys);
    expect(await repairOrphans(bench.ctx, 'repair', [id])).toEqual([{ id, to: 'unverified' }]);
    expect(await dumpQueue(bench.redis, bench.keys)).toEqual(before);

    // The doctor says so and counts it unrepaired; its lane-index repair empties the index, so
    // the next run judges the row.
    const first = await diagnoseQueue(bench.ctx, { repair: true });
    expect(first.findings.find((finding) => finding.kind === 'orphan-row')).toMatchObject({
      count: 1,
      repaired: 0,
      details: [expect.stringMatching(/^not judged: the lane index names more than 2000 pending sets/)],
    });
    const second = await diagnoseQueue(bench.ctx, { repair: true });
    expect(second.findings).toEqual([
      expect.objectContaining({ kind: 'orphan-row', ids: [id], details: ['went to pending'], repaired: 1 }),
    ]);
    expect(await bench.redis.zscore(bench.keys.pending, id)).toBe('0');
  });

  it('spends a bounded number of lookups per call: a batch past the budget is judged over several calls, each id once', async () => {
    const sets = 1_500; // with the plain pending set, 1,501 to look in: six candidates a call
    const perCall = Math.floor(ORPHAN_RECHECK_LOOKUPS_MAX / (sets + 1));
    const ids = await bench.queues.enqueueMany(
      bench.queue,
      Array.from({ length: 20 }, (_, n) => ({ data: n })),
    );
    await bench.redis.zrem(bench.keys.pending, ...ids);
    await bench.redis.zadd(
      bench.keys.ready(3),
      ...Array.from({ length: sets }, (_, i) => [0, `idle-${i}`]).flat(),
    );

    const orphans = await repairOrphans(bench.ctx, 'repair', ids);
    expect(orphans.map((orphan) => orphan.id).sort()).toEqual([...ids].sort());
    expect(orphans.every((orphan) => orphan.to === 'pending')).toBe(true);
    const repairedEvents = (await events(bench.redis, bench.keys)).filter(
      (event) => event.fields.type === 'repaired',
    );
    expect(repairedEvents.map((event) => event.fields.ids.split(',').length)).toEqual(
      Array.from({ length: Math.ceil(ids.length / perCall) }, (_, i) =>
        Math.min(perCall, ids.length - i * perCall),
      ),
    );
    expect(await bench.redis.zcard(bench.keys.pending)).toBe(ids.length);
  });
});
