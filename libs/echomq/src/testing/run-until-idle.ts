import { InvalidArgumentError } from '../errors';
import type { QueueService } from '../queue/queue.service';
import type { QueueCounts } from '../queue/reads';
import { promoteDue, type ScriptContext } from '../scripts';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import type { ProcessorExplorer } from '../worker/processor-explorer';
import type { QueueLoop } from '../worker/queue-loop';
import { RunTimeoutError } from './errors';
import { RunTally, type RunSummary } from './run-tally';

/** Under jest's default 5 s test timeout, so that the kit's message (what was left) is the one shown. */
const DEFAULT_TIMEOUT_MS = 4_000;
const TIMER_MAX_MS = 2_147_483_647;
/**
 * Between two idleness checks, the run waits for its next outcome, or this long at most:
 * a job held by another process, or one the loop is about to claim, reports nothing here.
 */
const RECHECK_MS = 25;
/** Promote calls per check; each moves up to SCRIPT_BATCH_MAX jobs. */
const PROMOTE_CALLS_MAX = 100;

export interface RunUntilIdleOptions {
  /** Gives up after this long with RunTimeoutError: 1 to 2,147,483,647 ms. Default 4,000 ms. */
  readonly timeoutMs?: number;
  /**
   * Also runs the jobs waiting in schedule (delayed, or waiting out a retry's backoff):
   * they are made due at once, again after each failure, so a failing job runs all its
   * attempts in one call. Default false: they stay scheduled (the summary counts them),
   * and only jobs already due are run.
   */
  readonly includeDelayed?: boolean;
}

interface Deps {
  readonly queues: QueueService;
  readonly explorer: ProcessorExplorer;
}

/**
 * Runs a queue's jobs in this application until none is pending or active (see
 * EchoMqTestKit.runUntilIdle). With processors not started at boot it starts the queue's
 * claim loops for the run and stops them after; otherwise it only waits. A partitioned queue is
 * run whole: every physical queue of its layout is promoted (and made due) and counted, and the
 * run is idle when all of them are drained and none of the queue's loops is busy.
 */
export async function runUntilIdle<R>(
  { queues, explorer }: Deps,
  queue: string,
  options: RunUntilIdleOptions = {},
): Promise<RunSummary<R>> {
  const { timeoutMs, includeDelayed } = checkOptions(options);
  // A physical queue that appeared since the boot (a partition, jobs in the queue itself) gets its loop first.
  await explorer.followLayout(queue);
  const loop = explorer.requireLoop(queue);
  const manual = !explorer.isServing(queue);
  const tally = new RunTally<R>(loop.events);
  const deadline = Date.now() + timeoutMs;
  let stopped = false;
  try {
    if (manual) explorer.startQueue(queue);
    const { counts, idle } = await untilIdle(queues, queue, loop, tally, includeDelayed, deadline);
    if (idle) return tally.summary(counts.schedule);
    // Read before the stop: what the run was still waiting for.
    const waitedOn = { counts, lingering: loop.lingering };
    // Stopped before the error is thrown: jobs still running are released and their handlers aborted.
    if (manual) await explorer.stopQueue(queue, 0);
    stopped = true;
    const paused = await queues.isPaused(queue).catch(() => false);
    throw new RunTimeoutError(
      queue,
      timeoutMs,
      counts,
      timeoutMessage(queue, timeoutMs, waitedOn, tally, manual, paused),
    );
  } finally {
    if (manual && !stopped) await explorer.stopQueue(queue);
    tally.detach();
  }
}

async function untilIdle(
  queues: QueueService,
  queue: string,
  loop: QueueLoop,
  tally: RunTally<unknown>,
  includeDelayed: boolean,
  deadline: number,
): Promise<{ counts: QueueCounts; idle: boolean }> {
  const contexts = (await queues.partitionLayout(queue)).physical.map((physical) => queues.context(physical));
  for (;;) {
    for (const ctx of contexts) {
      if (includeDelayed) await makeScheduledDue(ctx);
      // Due jobs go to pending now, not at the loop's next claim: a due job is work left.
      for (let call = 0; call < PROMOTE_CALLS_MAX && (await promoteDue(ctx, SCRIPT_BATCH_MAX)).more; call++);
    }
    // Summed over the physical queues of a partitioned queue.
    const counts = await queues.counts(queue);
    // Redis first, then the loop: a job Redis no longer shows as active may still have its
    // outcome on the way here, and the summary must have counted it.
    const drained = counts.pending === 0 && counts.active === 0 && (!includeDelayed || counts.schedule === 0);
    if (drained && !loop.busy) return { counts, idle: true };
    const left = deadline - Date.now();
    if (left <= 0) return { counts, idle: false };
    await tally.next(Math.min(RECHECK_MS, left));
  }
}

/**
 * Rewrites every run-at in one physical queue's schedule to 0, so the next promote moves them all.
 * One command on one key (atomic, on its slot); it changes when jobs are due,
 * not which set holds them, so no job changes state here: promote does that.
 */
async function makeScheduledDue(ctx: ScriptContext): Promise<void> {
  await ctx.redis.zunionstore(ctx.keys.schedule, 1, ctx.keys.schedule, 'WEIGHTS', 0);
}

function checkOptions(options: RunUntilIdleOptions): { timeoutMs: number; includeDelayed: boolean } {
  const { timeoutMs = DEFAULT_TIMEOUT_MS, includeDelayed = false } = options;
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > TIMER_MAX_MS) {
    throw new InvalidArgumentError(`runUntilIdle: timeoutMs must be an integer from 1 to ${TIMER_MAX_MS}`);
  }
  if (typeof includeDelayed !== 'boolean') {
    throw new InvalidArgumentError('runUntilIdle: includeDelayed must be true or false');
  }
  return { timeoutMs, includeDelayed };
}

function timeoutMessage(
  queue: string,
  timeoutMs: number,
  { counts, lingering }: { counts: QueueCounts; lingering: number },
  tally: RunTally<unknown>,
  manual: boolean,
  paused: boolean,
): string {
  const { completed, failed } = tally.summary(counts.schedule);
  return [
    `runUntilIdle('${queue}') did not finish within ${timeoutMs} ms: ${counts.active} active, ` +
      `${counts.pending} pending, ${counts.schedule} scheduled; this run completed ${completed} job(s) ` +
      `and saw ${failed} failed attempt(s).`,
    // With the queue drained, a handler that outlived its timeout is what the run waited for.
    ...(lingering > 0
      ? [
          `It waited for ${lingering} handler(s) still running after their attempt timed out: ` +
            'they ignored the abort of job.signal (their attempts are already recorded as failed).',
        ]
      : []),
    ...(paused ? [`The queue is paused: QueueService.resume('${queue}') lets it be claimed.`] : []),
    ...(manual ? ['Jobs still running were released to pending and their handlers aborted.'] : []),
  ].join(' ');
}
