import { RedisServer } from '../../support/redis-server';
import { scenario } from '../scenario';
import { bookOf, readLedger } from '../support/ledger';
import { openInspector } from '../support/inspector';
import { crashCompany } from '../support/poison-isolation';
import { Supervisor } from '../support/poison-supervisor';
import { within } from '../support/redis-deadline';
import { producerChild, producerFinished, workerChild, type ChildHandle } from '../support/processes';
import { basicPromises, judge, outcomeFigures, settle } from '../support/verdict';

const QUEUE = 'chaos-poison';

/**
 * Scenario 6: jobs that SIGKILL the worker process running them, every time. A supervisor
 * restarts each dead worker, as an orchestrator would. A poison job stays in active until its
 * lease runs out, the reaper returns it, another worker claims it and dies: each claim spends
 * one attempt, so after its own maxAttempts claims the reap moves it to dead. The other jobs
 * lose only the claims their dying process held, which run again elsewhere. They run with the
 * library's default maxAttempts, as a user's would. Every job of a dead process comes back a
 * crash suspect and then runs alone in its process (crash isolation), so the poison's later
 * runs kill no neighbour: an ordinary job is caught by at most one death, and completes.
 */
export const poisonPill = scenario({
  name: 'poison-pill',
  summary:
    'jobs that kill their worker every time end in dead after exactly their max attempts; the rest complete',
  params: {
    jobs: { full: 20_000, quick: 3_000, doc: 'ordinary jobs enqueued alongside the poison' },
    perSecond: { full: 1_000, quick: 1_000, doc: 'enqueue rate of the ordinary jobs' },
    poison: { full: 5, quick: 1, doc: 'poison jobs, enqueued among the others' },
    maxAttempts: { full: 5, quick: 3, doc: "each poison job's own maxAttempts" },
    workers: { full: 4, quick: 3, doc: 'worker processes, restarted when they die' },
    leaseMs: {
      full: 2_000,
      quick: 2_000,
      doc: "the processor's lease (how long a poison job waits to be reaped)",
    },
    workMs: { full: 5, quick: 5, doc: 'each ordinary handler sleeps this long' },
    othersMaxAttempts: {
      full: 3,
      quick: 3,
      doc: "the processor's maxAttempts, which the ordinary jobs run with (the library's default)",
    },
  },
  async run({ params, workDir, log }) {
    const redis = await RedisServer.start();
    const connection = { url: redis.url };
    const inspector = await openInspector(connection);
    const workers: ChildHandle[] = [];
    const supervisor = new Supervisor(workers);
    let producer: ChildHandle | undefined;
    try {
      const workerConfig = {
        connection,
        queue: QUEUE,
        ledgerDir: workDir,
        concurrency: 20,
        leaseMs: params.leaseMs,
        maxAttempts: params.othersMaxAttempts,
        module: { reaper: { intervalMs: 250 } },
      };
      for (let i = 0; i < params.workers; i++) workers.push(workerChild(workerConfig));
      await supervisor.start();
      producer = producerChild({
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
      await producer.start();
      const produced = producerFinished(producer);

      // The poison goes in among the ordinary jobs, spread over the first half of the run.
      const poisonIds: string[] = [];
      const expectedMs = (params.jobs / Math.max(1, params.perSecond)) * 1_000;
      const spreadMs = expectedMs / 2;
      for (let i = 0; i < params.poison; i++) {
        await new Promise((resolve) => setTimeout(resolve, spreadMs / Math.max(1, params.poison)));
        poisonIds.push(
          await inspector.queues.enqueue(
            QUEUE,
            { n: i },
            { name: 'poison', maxAttempts: params.maxAttempts },
          ),
        );
      }
      const { acked } = await within(produced, expectedMs * 3 + 60_000, 'the producer finishing');
      log(`producer acknowledged ${acked} jobs; ${poisonIds.length} poison jobs enqueued`);
      // Each poison job takes maxAttempts leases to die; the deadline leaves room for all of them.
      const patienceMs = params.poison * params.maxAttempts * (params.leaseMs + 5_000) + 30_000;
      const final = await settle(inspector.queues, QUEUE, patienceMs);
      await supervisor.stop('SIGTERM');

      const lines = readLedger(workDir);
      const book = bookOf(lines);
      const outcome = await judge(book, inspector.queues, QUEUE);
      const broken = basicPromises(outcome);
      if (!final.settled) broken.push('the queue did not settle');
      if (outcome.acked !== params.jobs) broken.push(`${outcome.acked} of ${params.jobs} jobs acknowledged`);
      broken.push(...supervisor.givenUp);

      // Every poison job: dead, its attempts exactly its maxAttempts, each handler run in a process that died.
      const exited = new Set(supervisor.exits);
      let poisonRuns = 0;
      let poisonAttempts = 0;
      let claimsWithoutRun = 0;
      for (const id of poisonIds) {
        const view = await inspector.queues.getJob(QUEUE, id);
        const runs = book.runs.get(id) ?? [];
        poisonRuns += runs.length;
        poisonAttempts += view?.attempts ?? 0;
        if (view?.state !== 'dead') broken.push(`poison job ${id} is ${view?.state ?? 'gone'}, not dead`);
        if (view?.attempts !== params.maxAttempts)
          broken.push(`poison job ${id} has ${view?.attempts} attempts, not ${params.maxAttempts}`);
        if (runs.length === 0 || runs.length > params.maxAttempts)
          broken.push(`poison job ${id} ran ${runs.length} times for ${params.maxAttempts} attempts`);
        // A claim whose process another poison job killed before this handler started spent an
        // attempt with no run: the handlers that did run are then fewer than the attempts.
        claimsWithoutRun += Math.max(0, (view?.attempts ?? 0) - runs.length);
        const survivors = runs.filter((run) => !exited.has(run.pid)).length;
        if (survivors > 0)
          broken.push(`poison job ${id} ran ${survivors} times in a process that did not die`);
      }
      // Nothing else killed a worker: every exit was a process that ran a poison job.
      const poisonPids = new Set(poisonIds.flatMap((id) => (book.runs.get(id) ?? []).map((run) => run.pid)));
      const otherDeaths = supervisor.exits.filter((pid) => !poisonPids.has(pid)).length;
      if (otherDeaths > 0) broken.push(`${otherDeaths} worker exits with no poison job run in them`);

      // An ordinary job runs again only after the process that held it died.
      let rerunsWithoutDeath = 0;
      let ordinaryExtraRuns = 0;
      for (const [id, runs] of book.runs) {
        if (poisonIds.includes(id)) continue;
        ordinaryExtraRuns += runs.length - 1;
        const sorted = [...runs].sort((a, b) => a.attempt - b.attempt);
        for (let i = 1; i < sorted.length; i++) if (!exited.has(sorted[i - 1].pid)) rerunsWithoutDeath += 1;
      }
      // Ordinary jobs that went dead without one handler run: their every claim was in a
      // process a poison job killed first (reaped with it, they were claimed with it again).
      const othersDeadNeverRan = outcome.dead.filter((id) => !book.runs.has(id)).length;
      if (rerunsWithoutDeath > 0)
        broken.push(`${rerunsWithoutDeath} ordinary jobs ran again though their process did not die`);
      // After its first run a poison job is a crash suspect: it runs alone, and kills no neighbour.
      const company = crashCompany(lines, supervisor.exits, poisonIds);
      if (company.poisonRunsNotAlone > 0)
        broken.push(
          `${company.poisonRunsNotAlone} later runs of a poison job had other handlers beside them`,
        );
      if (company.othersMaxAttempt > 2)
        broken.push(
          `an ordinary job completed on attempt ${company.othersMaxAttempt}: more than one death caught it`,
        );
      // outcome.dead counts acked ids only: the poison jobs came from the orchestrator.
      return {
        figures: {
          jobs: params.jobs,
          poison: params.poison,
          maxAttempts: params.maxAttempts,
          poisonAttempts,
          poisonRuns,
          claimsWithoutRun,
          workerDeaths: supervisor.exits.length,
          ...outcomeFigures(outcome),
          ordinaryExtraRuns,
          othersDeadNeverRan,
          rerunsWithoutDeath,
          ...company,
          settledMs: final.waitedMs,
        },
        broken,
      };
    } finally {
      await supervisor.stop('SIGKILL');
      await producer?.kill('SIGKILL');
      await inspector.close();
      await redis.destroy();
    }
  },
});
