import type { ScenarioOutcome } from '../scenario';
import type { FailoverPhaseSizes, FailoverResult } from './failover-phase';

/** One phase of a failover scenario: a fresh Redis, its master killed mid-run (see the phase files). */
export type FailoverPhase = (
  durable: boolean,
  sizes: FailoverPhaseSizes,
  workDir: string,
  log: (message: string) => void,
) => Promise<FailoverResult>;

/**
 * Runs a failover scenario's two phases, plain writes then durable writes, and judges them:
 * one line of figures for both, and the promises each broke.
 */
export async function runFailoverPhases(
  phase: FailoverPhase,
  sizes: FailoverPhaseSizes,
  workDir: string,
  log: (message: string) => void,
): Promise<ScenarioOutcome> {
  const results: FailoverResult[] = [];
  for (const durable of [false, true]) {
    const result = await phase(durable, sizes, workDir, log);
    const { outcome } = result;
    log(
      `${durable ? 'durable' : 'plain'}: ${outcome.acked} acknowledged, ${outcome.lost.length} lost, ` +
        `${outcome.sameTokenTwice.length} completed twice under one token`,
    );
    results.push(result);
  }
  return {
    figures: Object.assign({ jobs: sizes.jobs }, ...results.map(figuresOf)) as Record<
      string,
      number | string
    >,
    broken: results.flatMap((result) => promisesBroken(result, sizes.jobs)),
  };
}

/** A phase's figures, each named after its phase (e.g. durableLost=0), so both fit one line. */
function figuresOf(result: FailoverResult): Record<string, number | string> {
  const { outcome } = result;
  const figures: Record<string, number | string> = {
    acked: outcome.acked,
    lost: outcome.lost.length,
    sameTokenTwice: outcome.sameTokenTwice.length,
    completedTwice: outcome.completedTwice.length,
    stuck: outcome.stuck.length,
    extraRuns: outcome.extraRuns,
    stale: outcome.staleCompletions,
    enqueueRetries: [...result.book.failures.values()].reduce((sum, n) => sum + n, 0),
    notReplicated: result.book.failures.get('NOT_REPLICATED') ?? 0,
    failoverMs: result.failoverMs,
    ...(result.replicaBackMs === undefined ? {} : { replicaBackMs: result.replicaBackMs }),
    enqueueRecoveryMs: result.enqueueRecoveryMs ?? '-',
    workRecoveryMs: result.workRecoveryMs ?? '-',
  };
  const phase = result.durable ? 'durable' : 'plain';
  return Object.fromEntries(
    Object.entries(figures).map(([key, value]) => [`${phase}${key[0].toUpperCase()}${key.slice(1)}`, value]),
  );
}

/**
 * The promises a phase broke. Both phases: the fault came mid-run, everyone came back by
 * themselves (an enqueue and a completion after the promotion, no child exited), every
 * acknowledged job ended and no id was handed out twice. Durable writes only: no acknowledged
 * enqueue lost, no job completed twice under one token (plain writes' losses are reported).
 */
function promisesBroken(result: FailoverResult, jobs: number): string[] {
  const { outcome } = result;
  const phase = result.durable ? 'durable' : 'plain';
  const sample = (ids: readonly string[]): string => ids.slice(0, 3).join(', ');
  const broken: string[] = [];
  if (result.killedAtAcked === 0) broken.push(`${phase}: the producer finished before the master was killed`);
  if (result.childrenExited > 0) broken.push(`${phase}: ${result.childrenExited} child processes exited`);
  if (
    result.killedAtAcked > 0 &&
    (result.enqueueRecoveryMs === undefined || result.workRecoveryMs === undefined)
  )
    broken.push(`${phase}: no enqueue or no completion after the promotion`);
  if (!result.settled) broken.push(`${phase}: the queue did not settle after the failover`);
  if (outcome.acked < jobs) broken.push(`${phase}: ${outcome.acked} of ${jobs} jobs acknowledged`);
  if (outcome.stuck.length > 0)
    broken.push(`${phase}: ${outcome.stuck.length} jobs stuck (${sample(outcome.stuck)})`);
  if (outcome.dead.length > 0)
    broken.push(`${phase}: ${outcome.dead.length} jobs dead (${sample(outcome.dead)})`);
  if (result.idsAckedTwice.length > 0)
    broken.push(
      `${phase}: ${result.idsAckedTwice.length} ids returned for two jobs (${sample(result.idsAckedTwice)})`,
    );
  if (!result.durable) return broken;
  if (outcome.lost.length > 0)
    broken.push(`${phase}: ${outcome.lost.length} acknowledged jobs lost (${sample(outcome.lost)})`);
  if (outcome.sameTokenTwice.length > 0)
    broken.push(
      `${phase}: ${outcome.sameTokenTwice.length} jobs completed twice under one token (${sample(outcome.sameTokenTwice)})`,
    );
  return broken;
}
