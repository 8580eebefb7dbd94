import { RedisServer } from '../../support/redis-server';
import { scenario } from '../scenario';
import { bookOf, readLedger } from '../support/ledger';
import { openInspector } from '../support/inspector';
import { producerChild, producerFinished, workerChild, type ChildHandle } from '../support/processes';
import { basicPromises, judge, outcomeFigures, settle } from '../support/verdict';

const QUEUE = 'chaos-crash';

/**
 * Scenario 1: worker processes SIGKILLed at random while a producer enqueues. The jobs a
 * killed worker held stay in active until their lease runs out and the reaper returns them,
 * so every job completes once; a job runs again only when the process that held it died.
 */
export const workerCrashes = scenario({
  name: 'worker-crashes',
  summary:
    'worker processes SIGKILLed at random and restarted under load: nothing lost or stuck, every job completed once',
  params: {
    jobs: { full: 100_000, quick: 15_000, doc: 'jobs enqueued' },
    perSecond: {
      full: 2_500,
      quick: 1_500,
      doc: 'enqueue rate, so the run lasts long enough for many kills',
    },
    workers: { full: 4, quick: 3, doc: 'worker processes' },
    killEveryMs: { full: 3_000, quick: 1_000, doc: 'a random worker is SIGKILLed and restarted this often' },
    leaseMs: { full: 3_000, quick: 2_000, doc: "the processor's lease" },
    workMs: { full: 1, quick: 1, doc: 'each handler sleeps this long' },
  },
  async run({ params, workDir, log }) {
    const redis = await RedisServer.start();
    const connection = { url: redis.url };
    const inspector = await openInspector(connection);
    const workers: ChildHandle[] = [];
    const killedPids = new Set<number>();
    let kills = 0;
    let stopKilling = false;
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
        inFlight: 100,
        perSecond: params.perSecond,
        job: { name: 'work', data: { ms: params.workMs } },
        idempotencyPrefix: 'p1',
        retryDelayMs: 100,
      });
      await producer.start();
      const produced = producerFinished(producer);
      const started = Date.now();

      const killer = (async () => {
        while (!stopKilling) {
          await new Promise((resolve) => setTimeout(resolve, params.killEveryMs));
          if (stopKilling) break;
          const victim = workers[Math.floor(Math.random() * workers.length)];
          if (victim.pid !== undefined) killedPids.add(victim.pid);
          await victim.kill('SIGKILL');
          kills += 1;
          await victim.start();
        }
      })();

      const { acked } = await produced;
      log(`producer acknowledged ${acked} jobs`);
      // Keep killing until the backlog is gone, so crashes also hit the tail of the run.
      await settle(inspector.queues, QUEUE, 10 * 60_000);
      stopKilling = true;
      await killer;
      const drainedMs = Date.now() - started;
      // After the last kill, its jobs come back once their lease runs out.
      const final = await settle(inspector.queues, QUEUE, params.leaseMs * 4 + 10_000);
      await Promise.all(workers.map((worker) => worker.kill('SIGTERM')));

      const book = bookOf(readLedger(workDir));
      const outcome = await judge(book, inspector.queues, QUEUE);
      // A job runs again only after the process holding it died (its lease then expired).
      let rerunsWithoutCrash = 0;
      for (const runs of book.runs.values()) {
        const sorted = [...runs].sort((a, b) => a.attempt - b.attempt);
        for (let i = 1; i < sorted.length; i++)
          if (!killedPids.has(sorted[i - 1].pid)) rerunsWithoutCrash += 1;
      }
      const broken = basicPromises(outcome);
      if (!final.settled) broken.push('the queue did not settle after the last kill');
      if (outcome.acked !== params.jobs) broken.push(`${outcome.acked} of ${params.jobs} jobs acknowledged`);
      if (rerunsWithoutCrash > 0)
        broken.push(`${rerunsWithoutCrash} handler runs repeated a job whose process was never killed`);
      return {
        figures: {
          jobs: params.jobs,
          workers: params.workers,
          kills,
          ...outcomeFigures(outcome),
          rerunsWithoutCrash,
          staleCompletions: outcome.staleCompletions,
          completionsUnlogged: outcome.completedUnlogged,
          jobsPerSecond: Math.round(params.jobs / (drainedMs / 1000)),
        },
        broken,
      };
    } finally {
      stopKilling = true;
      await Promise.all(workers.map((worker) => worker.kill('SIGKILL')));
      await inspector.close();
      await redis.destroy();
    }
  },
});
