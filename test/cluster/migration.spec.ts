import type { INestApplication } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { Cluster } from 'ioredis';
import { QueueService, queueKeys, type Job, type JobId } from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { queueOnMaster, scanNode } from '../support/cluster-queues';
import { clusterConnection, clusterPerSuite } from '../support/cluster-suite';
import type { ClusterMaster, RedisCluster } from '../support/redis-cluster';
import { uniqueQueue } from '../support/redis';
import {
  DeferredMap,
  closeAll,
  deferred,
  loopOf,
  processorClass,
  withTimeout,
} from '../worker/fixtures/support';

/** Keys per MIGRATE: small, so that the slot stays half-migrated over many rounds. */
const BATCH = 5;
/**
 * The fault schedule: a pause after every batch keeps the slot half-migrated for seconds
 * (about 60 batches for the 300 rows), well beyond what ioredis's own TRYAGAIN handling
 * absorbs (16 redirections, 100 ms apart), so a call that merely relies on it fails.
 */
const PAUSE_MS = 50;
const INITIAL_JOBS = 300;
/** Durable writes: each enqueue and claim confirmed by a replica of the master holding it. */
const DURABLE = { replicas: 1, timeoutMs: 5_000 };

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A master other than `owner`: where the slot goes. */
async function otherMaster(cluster: RedisCluster, owner: ClusterMaster): Promise<ClusterMaster> {
  return (await cluster.masters()).find((master) => master.id !== owner.id)!;
}

/**
 * DESIGN §7 and issue 8 item 12: a queue's slot moves to another master (the way
 * `redis-cli --cluster reshard` moves it) while a worker runs and producers enqueue. A
 * migration may delay work; it must not fail calls, lose jobs or half-apply a transition.
 * With durable writes too: a confirmation whose record already moved is answered ASK by the
 * old master and waits for the end of the migration, then runs on the new master, which
 * already confirms another queue's writes for the same application.
 */
describe('Redis Cluster slot migration', () => {
  let client: Cluster | undefined;
  let producer: INestApplication | undefined;
  let worker: INestApplication | undefined;
  const suite = clusterPerSuite(3, { replicas: 1 }, async () => {
    client?.disconnect();
    await closeAll([worker, producer]);
  });

  afterEach(async () => {
    await closeAll([worker, producer]);
    worker = producer = undefined;
  }, 30_000);

  // The harness first, on raw keys and a plain cluster client: if this fails, the queue
  // test below says nothing about EchoMQ.
  it('the harness moves every key of a slot to the target, step by step, and the slot ends owned by the target on every node', async () => {
    const cluster = suite.cluster;
    client = new Cluster(cluster.nodes);
    const tag = `{harness-${randomBytes(4).toString('hex')}}`;
    const slot = await cluster.slotOf(tag);
    const source = await cluster.ownerOf(slot);
    const target = await otherMaster(cluster, source);

    // Keys of every type EchoMQ uses: strings, hashes (rows), sorted sets, lists, a stream.
    const expected = new Map<string, string>();
    for (let i = 0; i < 40; i++) {
      await client.set(`${tag}:s${i}`, `v${i}`);
      expected.set(`${tag}:s${i}`, `v${i}`);
    }
    await client.hset(`${tag}:h`, 'f', '1');
    await client.zadd(`${tag}:z`, 1, 'a');
    await client.rpush(`${tag}:l`, 'x');
    await client.xadd(`${tag}:x`, '*', 'k', 'v');
    const total = expected.size + 4;
    expect(await cluster.keysInSlot(slot, source.port)).toHaveLength(total);

    const migration = await cluster.beginMigration(slot, target.port);
    let checkedMidway = false;
    const written: string[] = [];
    await migration.drain({
      batch: BATCH,
      betweenBatches: async ({ moved }) => {
        if (!checkedMidway) {
          // Half-migrated for real: keys on both nodes, and a multi-key call over a moved
          // and an unmoved key is refused with TRYAGAIN (what EchoMQ's scripts face).
          checkedMidway = true;
          const onTarget = await cluster.keysInSlot(slot, target.port);
          const onSource = await cluster.keysInSlot(slot, source.port);
          expect(onTarget).toHaveLength(moved);
          expect(onSource.length).toBeGreaterThan(0);
          await expect(cluster.admin(source.port).exists(onTarget[0], onSource[0])).rejects.toThrow(
            /TRYAGAIN/,
          );
        }
        // Single-key writes during the migration land where they belong (ASK for a new key).
        const key = `${tag}:new${written.length}`;
        await client!.set(key, 'during');
        written.push(key);
        expected.set(key, 'during');
      },
    });
    await migration.finish();

    expect(checkedMidway).toBe(true);
    expect(await cluster.keysInSlot(slot, source.port)).toEqual([]);
    expect((await cluster.keysInSlot(slot, target.port)).sort()).toEqual(
      [...expected.keys(), `${tag}:h`, `${tag}:z`, `${tag}:l`, `${tag}:x`].sort(),
    );
    for (const master of await cluster.masters()) {
      expect((await cluster.ownerOf(slot, master.port)).id).toBe(target.id);
      expect(await cluster.admin(master.port).cluster('COUNTKEYSINSLOT', slot)).toBe(
        master.id === target.id ? total + written.length : 0,
      );
    }
    // The cluster client follows the move (MOVED) and reads every value intact.
    for (const [key, value] of expected) expect(await client.get(key)).toBe(value);
    expect(await client.hget(`${tag}:h`, 'f')).toBe('1');
    expect(await client.xlen(`${tag}:x`)).toBe(1);
  });

  it.each([
    ['plain writes', undefined],
    ['durable writes', DURABLE],
  ])(
    'moves a queue slot while a worker runs and producers enqueue (%s): every call succeeds, every job runs once, nothing is left',
    async (_writes, durable) => {
      const cluster = suite.cluster;
      const connection = clusterConnection(cluster);
      const queue = uniqueQueue('mig');
      const keys = queueKeys(queue);
      // The {queue} hashtag: every key of the queue, rows included, is on this one slot.
      const slot = await cluster.slotOf(keys.pending);
      expect(await cluster.slotOf(keys.jobPrefix + 'x')).toBe(slot);
      const source = await cluster.ownerOf(slot);
      const target = await otherMaster(cluster, source);

      // Durable: a queue on the target, so both applications confirm writes there before the move.
      const other = durable ? await queueOnMaster(cluster, target.port, 'mig-other') : undefined;

      producer = await bootApp([], { connection, ...(durable ? { durable } : {}) });
      const queues = producer.get(QueueService);
      const initial = await queues.enqueueMany(
        queue,
        Array.from({ length: INITIAL_JOBS }, (_, n) => ({ data: { n } })),
      );

      // Handlers record every run; the first ones wait until the migration has begun, so the
      // worker is provably mid-job (claims held, completions pending) when the slot starts moving.
      const runs = new Map<string, number>();
      const started = deferred();
      const migrating = deferred();
      const completed = new DeferredMap();
      const trouble: string[] = [];
      worker = await bootApp(
        [
          processorClass<{ n: number }>(queue, { concurrency: 10 }, async (job: Job<{ n: number }>) => {
            runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
            started.resolve();
            await migrating.promise;
            return job.data.n;
          }),
          ...(other ? [processorClass(other, {}, () => 'done')] : []),
        ],
        // A short grace period: if the test fails with jobs in flight, afterAll still ends soon.
        { connection, shutdownGraceMs: 2_000, ...(durable ? { durable } : {}) },
      );
      const events = loopOf(worker, queue).events;
      events.on('completed', (id) => completed.get(id).resolve());
      events.on('failed', (id, error) => trouble.push(`failed ${id}: ${String(error)}`));
      events.on('stale', (id, attempt) => trouble.push(`stale ${id} (attempt ${attempt})`));

      await withTimeout(started.promise, 10_000, 'the worker never started a job');
      if (other) expect(await queues.waitFor(other, await queues.enqueue(other, {}), 10_000)).toBe('done');
      const migration = await cluster.beginMigration(slot, target.port);
      migrating.resolve();

      // Producers keep enqueueing while the slot is half-migrated. The calls are not awaited
      // inside the hook: one that waits for the migration to end (the expected behaviour) would
      // otherwise hold the migration up and deadlock it.
      const during: Promise<JobId[]>[] = [];
      // A refusal is judged after the migration (allSettled below); until then it must not
      // surface as an unhandled rejection, which jest would report against the test instead.
      const track = (call: Promise<JobId[]>): void => {
        call.catch(() => undefined);
        during.push(call);
      };
      let n = INITIAL_JOBS;
      const progress = await migration.drain({
        batch: BATCH,
        betweenBatches: async () => {
          track(queues.enqueue(queue, { n: n++ }).then((id) => [id]));
          track(queues.enqueueMany(queue, [{ data: { n: n++ } }, { data: { n: n++ } }]));
          await pause(PAUSE_MS);
        },
      });
      await migration.finish();
      // The migration really was long and busy: many batches, enqueues spread over them.
      expect(progress.batches).toBeGreaterThan(10);

      const outcomes = await Promise.allSettled(during);
      const refused = outcomes.flatMap((outcome) =>
        outcome.status === 'rejected' ? [String((outcome.reason as Error)?.message ?? outcome.reason)] : [],
      );
      // Summarised: on failure, how many calls were refused and the distinct reasons, not hundreds of lines.
      expect(
        refused.length === 0
          ? []
          : [`${refused.length} of ${during.length} calls refused`, ...new Set(refused)],
      ).toEqual([]);
      const enqueued = [
        ...initial,
        ...outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? outcome.value : [])),
      ];
      expect(new Set(enqueued).size).toBe(INITIAL_JOBS + (3 * during.length) / 2);

      // Every job's completion, as the worker saw Redis record it.
      await withTimeout(
        Promise.all(enqueued.map((id) => completed.get(id).promise)),
        20_000,
        `not every job completed (${runs.size} of ${enqueued.length} ran; ${trouble.slice(0, 5).join('; ')})`,
      );

      // Exactly once: with a 30 s lease nothing expired, so no job may have run twice.
      expect([...runs].filter(([, count]) => count !== 1)).toEqual([]);
      expect([...runs.keys()].sort()).toEqual([...enqueued].sort());
      expect(trouble).toEqual([]);
      // Nothing left behind: no job in any set, no row on any node, the slot whole on the target.
      expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
      expect((await queues.metrics(queue)).completed).toBe(enqueued.length);
      for (const master of await cluster.masters()) {
        expect(await scanNode(cluster, master.port, `${keys.jobPrefix}*`)).toEqual([]);
        expect((await cluster.ownerOf(slot, master.port)).id).toBe(target.id);
        if (master.id !== target.id) expect(await cluster.keysInSlot(slot, master.port)).toEqual([]);
      }
    },
    40_000,
  );
});
