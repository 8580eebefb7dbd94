import { scenario } from '../scenario';
import { crashPhase, type AppendFsync, type CrashPhaseResult } from '../support/redis-crash-phase';

const MODES: readonly AppendFsync[] = ['everysec', 'always'];

/**
 * Scenario 2: redis-server SIGKILLed mid-run and restarted on its AOF, once with
 * `appendfsync everysec` and once with `always`. With `always` Redis fsyncs every write before
 * it replies, so nothing it acknowledged can be missing after the restart: no acknowledged
 * enqueue lost, no completion undone. A SIGKILL alone loses nothing under everysec either (the
 * kernel has every write), so the everysec phase also cuts the AOF back by what a power cut
 * would take (`cutMs`), and reports what that lost: acknowledged enqueues gone, completions
 * undone (the job then runs again, each time under a claim of its own). In both, every process
 * resumes by itself and no id is handed out twice.
 */
export const redisCrash = scenario({
  name: 'redis-crash',
  summary:
    'redis-server SIGKILLed mid-run and restarted on its AOF (everysec, then always): always loses nothing acknowledged; everyone resumes by themselves',
  params: {
    jobs: { full: 40_000, quick: 3_000, doc: 'jobs enqueued per mode (by two producers)' },
    perSecond: { full: 2_000, quick: 1_000, doc: 'enqueue rate of both producers together' },
    workers: { full: 4, quick: 2, doc: 'worker processes' },
    kills: { full: 3, quick: 1, doc: 'redis-server kills per mode, spread over the enqueues' },
    downMs: {
      full: 6_000,
      quick: 2_500,
      doc: 'how long Redis stays down before its restart (past the lease and the node lease; full: past the command deadline too)',
    },
    cutMs: {
      full: 1_000,
      quick: 1_000,
      doc: 'everysec: after each kill the AOF is cut back to its length this long before, as a power cut leaves it (0: a plain kill)',
    },
    leaseMs: { full: 3_000, quick: 2_000, doc: "the processor's lease" },
    workMs: { full: 2, quick: 2, doc: 'each handler sleeps this long' },
  },
  async run({ params, workDir, log }) {
    const results: CrashPhaseResult[] = [];
    for (const mode of MODES) {
      const result = await crashPhase(mode, params, workDir, log);
      log(`${mode}: ${result.outcome.acked} acknowledged, ${result.outcome.lost.length} lost`);
      results.push(result);
    }
    const broken = results.flatMap((result) => promisesOf(result, params));
    return {
      figures: Object.assign({}, ...results.map(figuresOf)) as Record<string, number | string>,
      broken,
    };
  },
});

function figuresOf(result: CrashPhaseResult): Record<string, number | string> {
  const { outcome } = result;
  const most = (values: number[]): number | string => (values.length === 0 ? '-' : Math.max(...values));
  const figures: Record<string, number | string> = {
    kills: result.kills,
    ...(result.mode === 'everysec' ? { cutBytes: result.cutBytes } : {}),
    acked: outcome.acked,
    lost: outcome.lost.length,
    completed: outcome.completed + outcome.completedUnlogged,
    stuck: outcome.stuck.length,
    completedTwice: outcome.completedTwice.length,
    sameTokenTwice: outcome.sameTokenTwice.length,
    extraRuns: outcome.extraRuns,
    stale: outcome.staleCompletions,
    idsTwice: result.idsAckedTwice.length,
    enqueueRetries: [...result.book.failures.values()].reduce((sum, n) => sum + n, 0),
    recoveryMs: most(result.recoveryMs),
    enqueueRecoveryMs: most(result.enqueueRecoveryMs),
    workersExited: result.workersExited,
  };
  // One line for both modes: each figure named after its mode, e.g. alwaysLost=0.
  return Object.fromEntries(
    Object.entries(figures).map(([key, value]) => [
      `${result.mode}${key[0].toUpperCase()}${key.slice(1)}`,
      value,
    ]),
  );
}

function promisesOf(result: CrashPhaseResult, params: { jobs: number; kills: number }): string[] {
  const { mode, outcome } = result;
  const broken: string[] = [];
  const sample = (ids: readonly string[]): string => ids.slice(0, 3).join(', ');
  // Promises of both modes: the run tested what it says, and everyone came back by themselves.
  if (result.kills < params.kills)
    broken.push(`${mode}: only ${result.kills} of ${params.kills} kills came mid-run`);
  if (!result.settled) broken.push(`${mode}: the queue did not settle after the restarts`);
  if (result.workersExited > 0) broken.push(`${mode}: ${result.workersExited} worker processes exited`);
  if (outcome.acked < params.jobs)
    broken.push(`${mode}: ${outcome.acked} of ${params.jobs} jobs acknowledged`);
  if (outcome.stuck.length > 0)
    broken.push(`${mode}: ${outcome.stuck.length} jobs stuck (${sample(outcome.stuck)})`);
  if (outcome.dead.length > 0)
    broken.push(`${mode}: ${outcome.dead.length} jobs dead (${sample(outcome.dead)})`);
  if (result.idsAckedTwice.length > 0)
    broken.push(
      `${mode}: ${result.idsAckedTwice.length} ids returned for two jobs (${sample(result.idsAckedTwice)})`,
    );
  const exists = result.book.failures.get('JOB_EXISTS') ?? 0;
  if (exists > 0) broken.push(`${mode}: ${exists} enqueues refused with JOB_EXISTS (a minted id repeated)`);
  if (mode === 'everysec') return broken; // what everysec lost is reported, not a broken promise
  if (outcome.lost.length > 0)
    broken.push(`${mode}: ${outcome.lost.length} acknowledged jobs lost (${sample(outcome.lost)})`);
  if (outcome.completedTwice.length > 0)
    broken.push(
      `${mode}: ${outcome.completedTwice.length} completions undone (${sample(outcome.completedTwice)})`,
    );
  if (outcome.sameTokenTwice.length > 0)
    broken.push(`${mode}: ${outcome.sameTokenTwice.length} jobs completed twice under one token`);
  return broken;
}
