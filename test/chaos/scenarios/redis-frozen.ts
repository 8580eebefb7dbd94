import { RedisServer } from '../../support/redis-server';
import { scenario } from '../scenario';
import { bookOf, readLedger, type LedgerLine } from '../support/ledger';
import { openInspector } from '../support/inspector';
import { producerChild, producerFinished, workerChild, type ChildHandle } from '../support/processes';
import { within } from '../support/redis-deadline';
import { countBetween, firstAfter } from '../support/redis-ledger-facts';
import { basicPromises, judge, outcomeFigures, settle } from '../support/verdict';

const QUEUE = 'chaos-frozen';

/**
 * Scenario 3: redis-server SIGSTOPped for longer than the lease, then SIGCONT. While it is
 * frozen every call times out (the sockets stay open: the kernel still accepts), so workers
 * abort the jobs whose local lease ran out and keep retrying. When it thaws, its clock has
 * jumped past those leases and the reaper may take them back from workers that are alive:
 * their late completions are refused as stale and the jobs run again, the one duplicate the
 * freeze allows. No process may exit, nothing may be lost, and work must resume.
 */
export const redisFrozen = scenario({
  name: 'redis-frozen',
  summary:
    'redis-server SIGSTOPped for longer than the lease, then SIGCONT: no worker exits, nothing lost or stuck, throughput recovers',
  params: {
    jobs: { full: 30_000, quick: 6_000, doc: 'jobs enqueued' },
    perSecond: {
      full: 1_000,
      quick: 500,
      doc: 'enqueue rate, so enqueues go on before, during and after the freeze',
    },
    workers: { full: 4, quick: 2, doc: 'worker processes' },
    leaseMs: { full: 3_000, quick: 2_000, doc: "the processor's lease" },
    freezeMs: {
      full: 12_000,
      quick: 5_000,
      doc: 'how long redis-server stays stopped (longer than the lease)',
    },
    freezeAfterMs: { full: 8_000, quick: 3_000, doc: 'the freeze starts this long after the producer' },
    windowMs: {
      full: 3_000,
      quick: 2_000,
      doc: 'throughput is counted over this long before the freeze and after it',
    },
    workMs: { full: 20, quick: 20, doc: 'each handler sleeps this long' },
    longJobs: {
      full: 300,
      quick: 60,
      doc: 'jobs of longMs enqueued over the same span by a second producer, so some run across the freeze',
    },
    longMs: { full: 2_500, quick: 1_500, doc: 'how long each of the longJobs runs' },
  },
  async run({ params, workDir, log }) {
    const redis = await RedisServer.start();
    const connection = { url: redis.url };
    const inspector = await openInspector(connection);
    const workers: ChildHandle[] = [];
    const producers: ChildHandle[] = [];
    let frozen = false;
    try {
      const workerConfig = {
        connection,
        queue: QUEUE,
        ledgerDir: workDir,
        concurrency: 20,
        leaseMs: params.leaseMs,
        maxAttempts: 1_000,
        module: { reaper: { intervalMs: 250 } },
      };
      for (let i = 0; i < params.workers; i++) workers.push(workerChild(workerConfig));
      await Promise.all(workers.map((worker) => worker.start()));
      const producer = producerChild({
        connection,
        queue: QUEUE,
        ledgerDir: workDir,
        count: params.jobs,
        inFlight: 50,
        perSecond: params.perSecond,
        job: { name: 'work', data: { ms: params.workMs } },
        idempotencyPrefix: 'p1',
        retryDelayMs: 100,
      });
      // The long jobs span the same time as the short ones, so some are running when Redis stops.
      const longProducer = producerChild({
        connection,
        queue: QUEUE,
        ledgerDir: workDir,
        count: params.longJobs,
        inFlight: 10,
        perSecond: (params.longJobs * params.perSecond) / Math.max(1, params.jobs),
        job: { name: 'work', data: { ms: params.longMs } },
        idempotencyPrefix: 'long',
        retryDelayMs: 100,
      });
      producers.push(producer, longProducer);
      await Promise.all(producers.map((child) => child.start()));
      const produced = Promise.all([producerFinished(producer), producerFinished(longProducer)]);
      const pid = redis.pid;
      if (pid === undefined) throw new Error('redis-server has no pid');

      await new Promise((resolve) => setTimeout(resolve, params.freezeAfterMs));
      process.kill(pid, 'SIGSTOP');
      frozen = true;
      const stoppedAt = Date.now();
      log(`redis-server SIGSTOPped for ${params.freezeMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, params.freezeMs));
      process.kill(pid, 'SIGCONT');
      frozen = false;
      const thawedAt = Date.now();
      const producerAliveAtThaw = producer.running;

      const expectedMs = (params.jobs / Math.max(1, params.perSecond)) * 1_000 + params.freezeMs;
      const counts = await within(produced, expectedMs * 3 + 60_000, 'the producers finishing');
      log(`producers acknowledged ${counts.map((count) => count.acked).join(' + ')} jobs`);
      const final = await settle(inspector.queues, QUEUE, 10 * 60_000);
      const exited = workers.filter((worker) => !worker.running || worker.pids.length > 1).length;
      await Promise.all(workers.map((worker) => worker.kill('SIGTERM')));

      const lines = readLedger(workDir);
      const book = bookOf(lines);
      const outcome = await judge(book, inspector.queues, QUEUE);
      const rate = (from: number): number =>
        Math.round((countBetween(lines, 'done', from, from + params.windowMs) * 1000) / params.windowMs);
      const before = rate(stoppedAt - params.windowMs);
      const after = rate(thawedAt);
      const firstDone = firstAfter(lines, 'done', thawedAt);
      const unexplained = rerunsNotFromTheFreeze(lines, thawedAt + params.leaseMs);

      const broken = basicPromises(outcome);
      if (!final.settled) broken.push('the queue did not settle after the thaw');
      const expected = params.jobs + params.longJobs;
      if (outcome.acked !== expected) broken.push(`${outcome.acked} of ${expected} jobs acknowledged`);
      if (exited > 0) broken.push(`${exited} worker processes exited`);
      if (!producerAliveAtThaw) broken.push('the producer had finished before the thaw: enlarge jobs');
      if (firstDone === undefined) broken.push('no job completed after the thaw');
      if (unexplained > 0) broken.push(`${unexplained} handler runs repeated a job claimed after the thaw`);
      return {
        figures: {
          jobs: params.jobs + params.longJobs,
          freezeMs: params.freezeMs,
          leaseMs: params.leaseMs,
          ...outcomeFigures(outcome),
          staleCompletions: outcome.staleCompletions,
          rerunJobs: outcome.rerunJobs,
          rerunsNotFromFreeze: unexplained,
          workersExited: exited,
          enqueueRetries: [...book.failures.values()].reduce((sum, n) => sum + n, 0),
          jobsPerSecondBefore: before,
          jobsPerSecondAfter: after,
          firstCompletionAfterThawMs: firstDone === undefined ? '-' : firstDone.at - thawedAt,
        },
        broken,
      };
    } finally {
      const pid = redis.pid;
      if (frozen && pid !== undefined) process.kill(pid, 'SIGCONT');
      await Promise.all([...workers, ...producers].map((child) => child.kill('SIGKILL')));
      await inspector.close();
      await redis.destroy();
    }
  },
});

/**
 * Handler runs that repeat a job whose previous run began after `sinceMs`: a claim made once
 * Redis had thawed (plus a lease, for a claim answered late) carries a fresh lease that its live
 * worker keeps alive, so it must not be taken back. Reruns of earlier claims are the freeze's.
 */
function rerunsNotFromTheFreeze(lines: readonly LedgerLine[], sinceMs: number): number {
  const runsById = new Map<string, LedgerLine[]>();
  for (const line of lines) {
    if (line.kind !== 'run') continue;
    const runs = runsById.get(line.id);
    if (runs) runs.push(line);
    else runsById.set(line.id, [line]);
  }
  let count = 0;
  for (const runs of runsById.values()) {
    const sorted = [...runs].sort((a, b) => a.n - b.n);
    for (let i = 1; i < sorted.length; i++) if (sorted[i - 1].at >= sinceMs) count += 1;
  }
  return count;
}
