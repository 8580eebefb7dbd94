import { scenario } from '../scenario';
import { clusterFailoverPhase, type ClusterFailoverPhaseResult } from '../support/cluster-failover-phase';

/**
 * Scenario 10: Redis Cluster (3 masters, a replica each, cluster-node-timeout 1,000 ms) with the
 * master of the queue's slot SIGKILLed mid-run, once with plain writes and once with durable
 * writes (WAIT for the shard's replica, on the master that holds each write). The master dies
 * with its replica `lagMs` behind (stopped, its link dropped): without durable writes, what the
 * master acknowledged in that span is on no replica and is lost, and so are the claims and
 * completions of that span, whose fencing tokens the promoted replica hands out again (a job
 * completed twice under one token). Both are reported, not failed. With durable writes an
 * enqueue is acknowledged only once the shard's replica has it and a handler starts only once
 * its claim is replicated: no acknowledged enqueue is lost and no job is completed twice under
 * one token. Either way every process follows the new master by itself (its scripts loaded
 * again there), every acknowledged job that reached the new master ends, and no id is handed
 * out twice.
 */
export const clusterFailover = scenario({
  name: 'cluster-failover',
  summary:
    'the cluster master of the queue’s slot SIGKILLed mid-run, its replica behind, without and with durable writes: everyone follows the promoted replica; with durable writes no acknowledged enqueue is lost and no token completes twice',
  params: {
    jobs: { full: 20_000, quick: 2_000, doc: 'jobs enqueued per phase (plain, then durable)' },
    perSecond: { full: 2_000, quick: 800, doc: 'enqueue rate' },
    workers: { full: 3, quick: 2, doc: 'worker processes' },
    killAt: {
      full: 6_000,
      quick: 1_000,
      doc: 'the master is SIGKILLed once this many enqueues are acknowledged',
    },
    lagMs: {
      full: 500,
      quick: 300,
      doc: 'how far the replica is behind when the master dies: writes of that span reach only the master (under the 1 s cluster-node-timeout)',
    },
    leaseMs: { full: 3_000, quick: 2_000, doc: "the processor's lease" },
    workMs: {
      full: 50,
      quick: 100,
      doc: 'each handler sleeps this long: the workers (20 slots each) fall behind the producer, so jobs wait in pending and claims at the kill take jobs the replica already has',
    },
  },
  async run({ params, workDir, log }) {
    const sizes = { ...params, killAtAcked: params.killAt };
    const results: ClusterFailoverPhaseResult[] = [];
    for (const durable of [false, true]) {
      const result = await clusterFailoverPhase(durable, sizes, workDir, log);
      const { outcome } = result;
      log(
        `${durable ? 'durable' : 'plain'}: ${outcome.acked} acknowledged, ${outcome.lost.length} lost, ` +
          `${outcome.sameTokenTwice.length} completed twice under one token`,
      );
      results.push(result);
    }
    return {
      figures: Object.assign({ jobs: params.jobs }, ...results.map(figuresOf)) as Record<
        string,
        number | string
      >,
      broken: results.flatMap((result) => promisesOf(result, params.jobs)),
    };
  },
});

function figuresOf(result: ClusterFailoverPhaseResult): Record<string, number | string> {
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
    replicaBackMs: result.replicaBackMs,
    enqueueRecoveryMs: result.enqueueRecoveryMs ?? '-',
    workRecoveryMs: result.workRecoveryMs ?? '-',
  };
  // One line for both phases: each figure named after its phase, e.g. durableLost=0.
  const phase = result.durable ? 'durable' : 'plain';
  return Object.fromEntries(
    Object.entries(figures).map(([key, value]) => [`${phase}${key[0].toUpperCase()}${key.slice(1)}`, value]),
  );
}

function promisesOf(result: ClusterFailoverPhaseResult, jobs: number): string[] {
  const { outcome } = result;
  const phase = result.durable ? 'durable' : 'plain';
  const sample = (ids: readonly string[]): string => ids.slice(0, 3).join(', ');
  const broken: string[] = [];
  // Promises of both phases: the fault came mid-run, and everyone came back by themselves.
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
  if (!result.durable) return broken; // what plain writes lost is reported, not a broken promise
  if (outcome.lost.length > 0)
    broken.push(`${phase}: ${outcome.lost.length} acknowledged jobs lost (${sample(outcome.lost)})`);
  if (outcome.sameTokenTwice.length > 0)
    broken.push(
      `${phase}: ${outcome.sameTokenTwice.length} jobs completed twice under one token (${sample(outcome.sameTokenTwice)})`,
    );
  return broken;
}
