import { existsSync, readFileSync } from 'node:fs';
import { RedisServer } from '../../support/redis-server';
import { scenario } from '../scenario';
import { bookOf, readLedger } from '../support/ledger';
import { openInspector } from '../support/inspector';
import { childEntry } from '../support/paths';
import { ChildHandle, producerFinished } from '../support/processes';
import { within } from '../support/redis-deadline';
import { skewReportPath, type SkewProducerConfig, type SkewProducerReport } from '../support/skew-config';
import { EventClock } from '../support/skew-clocks';
import { runsById, type SkewFacts, type SkewProducer } from '../support/skew-checks';
import { clockStepPhase } from '../support/skew-step-phase';
import { judgeSkew } from '../support/skew-verdict';
import { judge, settle } from '../support/verdict';

const QUEUE = 'chaos-skew';
const MINUTE_MS = 60_000;

/**
 * Scenario 5: workers and producers whose wall clocks are minutes off (libfaketime; their
 * monotonic clocks are not faked). Every transition takes its time from Redis, so nothing may
 * be lost or run twice, no lease may expire, and retries, delays, a schedule's occurrences and
 * the event stream keep server time. Ids are minted on the server's clock through the node
 * lease, so FIFO across producers follows real enqueue order whatever their clocks; a producer
 * with a configured nodeId mints on its own clock, and its ids (and FIFO place) carry its skew.
 * Then a step phase: two workers whose wall clocks jump by the same minutes, one forward and
 * one back, while their jobs (longer than a lease) run; none may be aborted, failed or rerun.
 */
export const clockSkew = scenario({
  name: 'clock-skew',
  summary:
    'workers and producers with clocks minutes off: nothing lost or run twice; leases, retries, delays, schedules and events on server time',
  params: {
    skewMinutes: { full: 5, quick: 5, doc: 'the skewed processes run this many minutes ahead or behind' },
    fifoJobs: { full: 400, quick: 60, doc: 'jobs each producer enqueues one at a time (the FIFO sample)' },
    fifoPerSecond: { full: 40, quick: 30, doc: "each producer's enqueue rate for its FIFO sample" },
    longJobs: {
      full: 20,
      quick: 6,
      doc: 'jobs per leased producer that run 1.5 leases (heartbeats keep them)',
    },
    failOnce: {
      full: 40,
      quick: 10,
      doc: 'jobs per leased producer that fail once, with their own fixed backoff',
    },
    backoffMs: { full: 2_000, quick: 1_000, doc: 'the fail-once jobs backoff' },
    delayed: { full: 40, quick: 10, doc: 'jobs per leased producer enqueued with delayMs' },
    delayMs: { full: 3_000, quick: 1_500, doc: 'their delay' },
    everyMs: { full: 1_000, quick: 1_000, doc: 'interval of the schedule each leased producer upserts' },
    ticks: { full: 5, quick: 3, doc: 'occurrences each schedule must run before it is removed' },
    leaseMs: { full: 3_000, quick: 2_000, doc: "the processor's lease" },
    stepJobs: {
      full: 40,
      quick: 8,
      doc: 'jobs of two leases each running when two workers have their clocks stepped (half each)',
    },
  },
  async run({ params, workDir, log }) {
    const skewMs = params.skewMinutes * MINUTE_MS;
    const ahead = `+${params.skewMinutes}m`;
    const behind = `-${params.skewMinutes}m`;
    const redis = await RedisServer.start();
    const connection = { url: redis.url };
    const inspector = await openInspector(connection);
    const events = await EventClock.follow(inspector.queues, QUEUE, skewMs);
    const children: { handle: ChildHandle; offsetMs: number }[] = [];
    try {
      const worker = (offset: string | undefined, offsetMs: number): ChildHandle => {
        const config = {
          connection,
          queue: QUEUE,
          ledgerDir: workDir,
          // Room for every job at once, so a retry or a delayed job never waits for a free slot.
          concurrency: 100,
          leaseMs: params.leaseMs,
          maxAttempts: 3,
          module: { reaper: { intervalMs: 250 } },
        };
        const handle = new ChildHandle(childEntry('skew-worker-child'), config, { clockOffset: offset });
        children.push({ handle, offsetMs });
        return handle;
      };
      const producers: { label: string; leased: boolean; handle: ChildHandle; offsetMs: number }[] = [];
      const producer = (label: string, offset: string, offsetMs: number, nodeId?: number): void => {
        const leased = nodeId === undefined;
        const config: SkewProducerConfig = {
          connection,
          queue: QUEUE,
          ledgerDir: workDir,
          count: params.fifoJobs,
          inFlight: 1,
          perSecond: params.fifoPerSecond,
          job: { name: 'work', data: { ms: 1 } },
          idempotencyPrefix: label,
          retryDelayMs: 100,
          module: leased ? {} : { nodeId },
          warmupMs: 2_500,
          long: { count: leased ? params.longJobs : 0, ms: Math.round(params.leaseMs * 1.5) },
          failOnce: { count: leased ? params.failOnce : 0, backoffMs: params.backoffMs },
          delayed: { count: leased ? params.delayed : 0, delayMs: params.delayMs },
          ...(leased ? { schedule: { key: `every-${label}`, everyMs: params.everyMs } } : {}),
        };
        const handle = new ChildHandle(childEntry('skew-producer-child'), config, { clockOffset: offset });
        children.push({ handle, offsetMs });
        producers.push({ label, leased, handle, offsetMs });
      };
      const workers = [worker(ahead, skewMs), worker(behind, -skewMs), worker(undefined, 0)];
      producer('leasedAhead', ahead, skewMs);
      producer('leasedBehind', behind, -skewMs);
      producer('nodeIdAhead', ahead, skewMs, 1_001);
      producer('nodeIdBehind', behind, -skewMs, 1_002);
      await Promise.all(children.map((child) => child.handle.start()));
      log(`${workers.length} workers and ${producers.length} producers up (clocks ${ahead}, ${behind}, 0)`);
      await within(
        Promise.all(producers.map((p) => producerFinished(p.handle))),
        5 * MINUTE_MS,
        'the producers finishing',
      );

      const schedules = producers.filter((p) => p.leased).map((p) => `every-${p.label}`);
      const ticked = await untilTicks(
        workDir,
        schedules.length * params.ticks,
        60_000 + params.ticks * params.everyMs * 4,
      );
      for (const key of schedules) await inspector.queues.removeSchedule(QUEUE, key);
      const patienceMs = 30_000 + params.backoffMs + params.delayMs + params.leaseMs * 4;
      const final = await settle(inspector.queues, QUEUE, patienceMs);
      const metrics = await inspector.queues.metrics(QUEUE);
      await Promise.all(children.map((child) => child.handle.kill('SIGTERM')));
      events.stop();

      const offsets = new Map<number, number>();
      for (const child of children) for (const pid of child.handle.pids) offsets.set(pid, child.offsetMs);
      const lines = readLedger(workDir);
      const book = bookOf(lines);
      const outcome = await judge(book, inspector.queues, QUEUE);
      const facts: SkewFacts = { runs: runsById(lines), offsets, events };
      const skewProducers: SkewProducer[] = producers.map((p) => ({
        label: p.label,
        offsetMs: p.offsetMs,
        leased: p.leased,
        report: readReport(workDir, p.handle.pids),
      }));
      // A schedule's occurrences are the runs no producer enqueued; their row names the schedule.
      const ticks = new Map<string, typeof lines>(schedules.map((key) => [key, []]));
      for (const [id, runs] of facts.runs) {
        if (book.acked.has(id)) continue;
        const view = await inspector.queues.getJob<{ key?: string }>(QUEUE, id);
        ticks.get(view?.data?.key ?? '')?.push(...runs);
      }
      const { figures, broken } = judgeSkew({
        params: { ...params, skewMs },
        outcome,
        facts,
        producers: skewProducers,
        ticks,
        metrics,
      });
      if (!ticked) broken.push(`the schedules did not run ${params.ticks} occurrences each`);
      if (!final.settled) broken.push('the queue did not settle');

      const step = await clockStepPhase(
        { connection, queues: inspector.queues, queue: `${QUEUE}-step`, workDir, log },
        { jobs: params.stepJobs, leaseMs: params.leaseMs, stepSeconds: params.skewMinutes * 60 },
      );
      log(`step phase: ${step.broken.length === 0 ? 'held' : step.broken.join('; ')}`);
      return { figures: { ...figures, ...step.figures }, broken: [...broken, ...step.broken] };
    } finally {
      events.stop();
      await Promise.all(children.map((child) => child.handle.kill('SIGKILL')));
      await inspector.close();
      await redis.destroy();
    }
  },
});

/** The report a producer wrote when it finished (its one incarnation). */
function readReport(workDir: string, pids: readonly number[]): SkewProducerReport {
  for (const pid of pids) {
    const path = skewReportPath(workDir, pid);
    if (existsSync(path)) return JSON.parse(readFileSync(path, 'utf8')) as SkewProducerReport;
  }
  throw new Error(`no skew producer report for pids ${pids.join(', ')}`);
}

/**
 * Waits until the workers have run `count` jobs that no producer enqueued (the schedules'
 * occurrences), reading the ledger: the occurrences come on server time, and no event says
 * the n-th has run. False after `timeoutMs`.
 */
async function untilTicks(workDir: string, count: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const book = bookOf(readLedger(workDir));
    let ticks = 0;
    for (const id of book.runs.keys()) if (!book.acked.has(id)) ticks += 1;
    if (ticks >= count) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
