import { Redis } from 'ioredis';
import { FaultProxy } from '../../support/fault-proxy';
import { RedisServer } from '../../support/redis-server';
import { scenario } from '../scenario';
import { openInspector } from '../support/inspector';
import { bookOf, readLedger } from '../support/ledger';
import { runFaultPlan, type FaultPlanTimings } from '../support/net-fault-plan';
import { readLeaseHistory, unexplainedReruns } from '../support/net-lease-history';
import { completionsPerSecond, keysWithTwoJobs } from '../support/net-ledger-windows';
import { offerWorkUntilEachCompletes } from '../support/net-wedge-probe';
import { producerChild, producerFinished, workerChild, type ChildHandle } from '../support/processes';
import { basicPromises, judge, outcomeFigures, settle } from '../support/verdict';

const QUEUE = 'chaos-net';
const PRODUCERS = 2;
/** Far above what one run writes, so the stream keeps every claim and reap for the verdict. */
const EVENTS_MAX_LEN = 1_000_000;
/**
 * A worker that completes nothing this long after the last fault is healed, with work waiting,
 * is wedged. A worker may legitimately take a while: a wake wait on a socket that died
 * silently ends at its watchdog (the 5 s idle wait plus 2 s), and reconnects back off up to 2 s.
 */
const WEDGE_DEADLINE_MS = 20_000;
/** A worker that has not exited this long after SIGTERM is hung on its shutdown. */
const SHUTDOWN_WAIT_MS = 30_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves true once the child exited after SIGTERM, false if it had to be SIGKILLed. */
async function stopWithin(child: ChildHandle, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const stopped = await Promise.race([
    child.kill('SIGTERM').then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  if (!stopped) await child.kill('SIGKILL');
  return stopped;
}

/**
 * Scenario 4: workers and producers reach Redis only through a loopback fault proxy, which
 * loses replies to claims, completions, enqueues and heartbeats, silences every socket (for
 * less than a lease, then for more), resets every connection and refuses new ones, while load
 * runs. Every write repeats under its request id or idempotency key, so nothing is lost or made
 * twice; a job runs again only after a lease of it expired (by the queue's own event stream);
 * and once the network is healed every worker process completes jobs again.
 */
export const networkFaults = scenario({
  name: 'network-faults',
  summary:
    'lost replies, silent sockets, resets and refused connections through a fault proxy under load: nothing lost, reruns only after a lease expiry, no worker wedged',
  params: {
    perSecond: { full: 600, quick: 400, doc: 'enqueue rate of all producers together' },
    workers: { full: 4, quick: 3, doc: 'worker processes' },
    rounds: {
      full: 4,
      quick: 1,
      doc: 'rounds of the fault sequence (lost replies, silences, resets, refusals)',
    },
    leaseMs: { full: 4_000, quick: 2_500, doc: "the processor's lease; the long silence outlasts it" },
    commandTimeoutMs: { full: 1_000, quick: 1_000, doc: 'the command deadline of every child' },
    workMs: { full: 20, quick: 20, doc: 'each handler sleeps this long' },
    warmupMs: { full: 3_000, quick: 1_500, doc: 'clean load before the first fault' },
    gapMs: { full: 1_000, quick: 400, doc: 'quiet time after each fault' },
    afterMs: { full: 6_000, quick: 3_000, doc: 'load after the last fault is healed' },
  },
  async run({ params, workDir, log }) {
    const timings: FaultPlanTimings = {
      rounds: params.rounds,
      gapMs: params.gapMs,
      shortSilenceMs: Math.round(params.commandTimeoutMs * 1.5),
      longSilenceMs: params.leaseMs + Math.round(params.commandTimeoutMs * 1.5),
      refuseMs: Math.round(params.commandTimeoutMs * 1.5),
      lostWaitMs: 3 * params.commandTimeoutMs,
    };
    // The lost replies usually all fire within a deadline of their rules being set.
    const roundMs =
      params.commandTimeoutMs +
      4 * timings.gapMs +
      timings.shortSilenceMs +
      timings.refuseMs +
      timings.longSilenceMs;
    // Enough jobs that the producers are still at it after the last fault (a fault only
    // slows them, so they end at or after this plan's end).
    const plannedMs = params.warmupMs + params.rounds * roundMs + params.afterMs;
    const jobs = Math.ceil((params.perSecond * plannedMs) / 1000 / PRODUCERS) * PRODUCERS;

    const redis = await RedisServer.start();
    const proxy = await FaultProxy.start({ target: { host: '127.0.0.1', port: redis.port } });
    const direct = new Redis(redis.url);
    // The orchestrator's own view goes to Redis directly, around the faults.
    const inspector = await openInspector({ url: redis.url });
    const workers: ChildHandle[] = [];
    const producers: ChildHandle[] = [];
    try {
      const module = {
        commandTimeoutMs: params.commandTimeoutMs,
        eventsMaxLen: EVENTS_MAX_LEN,
        reaper: { intervalMs: 250 },
      };
      const connection = { url: proxy.url };
      for (let i = 0; i < params.workers; i++) {
        workers.push(
          workerChild({
            connection,
            queue: QUEUE,
            ledgerDir: workDir,
            concurrency: 10,
            leaseMs: params.leaseMs,
            maxAttempts: 1_000,
            module,
          }),
        );
      }
      await Promise.all(workers.map((worker) => worker.start()));
      for (let i = 0; i < PRODUCERS; i++) {
        producers.push(
          producerChild({
            connection,
            queue: QUEUE,
            ledgerDir: workDir,
            count: jobs / PRODUCERS,
            inFlight: 50,
            perSecond: params.perSecond / PRODUCERS,
            job: { name: 'work', data: { ms: params.workMs } },
            idempotencyPrefix: `n${i}`,
            retryDelayMs: 100,
            module,
          }),
        );
      }
      await Promise.all(producers.map((producer) => producer.start()));
      const produced = Promise.all(producers.map(producerFinished));
      const loadFrom = Date.now();

      await sleep(params.warmupMs);
      const faults = await runFaultPlan(proxy, timings, log);
      log(`last fault healed; ${proxy.stats.repliesDropped} replies dropped in all`);
      await sleep(params.afterMs);
      const pids = workers.flatMap((worker) => worker.pids);
      const probe = await offerWorkUntilEachCompletes({
        queues: inspector.queues,
        queue: QUEUE,
        ledgerDir: workDir,
        pids,
        since: faults.lastHealAt,
        deadlineMs: faults.lastHealAt + WEDGE_DEADLINE_MS,
        job: { name: 'work', data: { ms: params.workMs } },
      });
      const counts = await produced;
      log(`producers acknowledged ${counts.reduce((sum, c) => sum + c.acked, 0)} jobs`);
      const final = await settle(inspector.queues, QUEUE, params.leaseMs * 4 + 10_000);
      const exitedEarly = workers.filter((worker) => !worker.running).length;
      const hungAtShutdown = (await Promise.all(workers.map((w) => stopWithin(w, SHUTDOWN_WAIT_MS)))).filter(
        (stopped) => !stopped,
      ).length;

      const lines = readLedger(workDir);
      const book = bookOf(lines);
      const outcome = await judge(book, inspector.queues, QUEUE);
      const history = await readLeaseHistory(direct, QUEUE);
      const reruns = unexplainedReruns(book, history);
      const keys = keysWithTwoJobs(book);
      const wedged = [...probe.recovery].filter(([, ms]) => ms === undefined).map(([pid]) => pid);
      const failures = new Map(book.failures);
      const takeFailures = (code: string): number => {
        const n = failures.get(code) ?? 0;
        failures.delete(code);
        return n;
      };
      const outcomeUnknown = takeFailures('OUTCOME_UNKNOWN');
      const redisUnavailable = takeFailures('REDIS_UNAVAILABLE');
      const untyped = [...failures].map(([code, n]) => `${code}×${n}`);

      const broken = basicPromises(outcome);
      if (!final.settled) broken.push('the queue did not settle after the faults were healed');
      if (keys.keys !== jobs) broken.push(`${keys.keys} of ${jobs} jobs acknowledged`);
      if (keys.duplicates > 0) broken.push(`${keys.duplicates} idempotency keys made a second job`);
      if (history.incomplete) broken.push(`reruns cannot be judged: ${history.incomplete}`);
      if (reruns.count > 0)
        broken.push(
          `${reruns.count} handler runs not explained by a lease expiry (${reruns.samples.join('; ')})`,
        );
      if (exitedEarly > 0) broken.push(`${exitedEarly} worker processes exited during the faults`);
      if (wedged.length > 0)
        broken.push(
          `worker processes ${wedged.join(', ')} completed nothing within ${WEDGE_DEADLINE_MS} ms of the network being healed`,
        );
      if (hungAtShutdown > 0) broken.push(`${hungAtShutdown} workers did not exit within 30 s of SIGTERM`);
      if (untyped.length > 0) broken.push(`enqueues failed with untyped errors: ${untyped.join(', ')}`);
      const lostReplies = faults.injected.lostReply + faults.injected.lostReplyThenClose;
      if (lostReplies === 0) broken.push('no reply was lost: the lost-reply faults never fired');

      const recoveries = [...probe.recovery.values()].filter((ms): ms is number => ms !== undefined);
      return {
        figures: {
          jobs,
          workers: params.workers,
          ...faults.injected,
          lostClaim: faults.lostByScript.emqClaim ?? 0,
          lostComplete: faults.lostByScript.emqComplete ?? 0,
          lostEnqueue: faults.lostByScript.emqEnqueue ?? 0,
          lostExtend: faults.lostByScript.emqExtend ?? 0,
          repliesDropped: proxy.stats.repliesDropped,
          ...outcomeFigures(outcome),
          reaped: history.reaped,
          leaseAborts: history.leaseFailures,
          rerunsUnexplained: reruns.count,
          staleCompletions: outcome.staleCompletions,
          completionsUnlogged: outcome.completedUnlogged,
          outcomeUnknown,
          redisUnavailable,
          maxRecoveryMs: recoveries.length > 0 ? Math.max(...recoveries) : -1,
          probeJobs: probe.offered,
          jobsPerSecondBefore: completionsPerSecond(lines, loadFrom + 500, faults.firstAt),
          jobsPerSecondAfter: completionsPerSecond(
            lines,
            faults.lastHealAt,
            faults.lastHealAt + params.afterMs,
          ),
        },
        broken,
      };
    } finally {
      await Promise.all([...workers, ...producers].map((child) => child.kill('SIGKILL')));
      await inspector.close();
      direct.disconnect();
      await proxy.stop();
      await redis.destroy();
    }
  },
});
