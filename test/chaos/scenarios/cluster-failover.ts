import { scenario } from '../scenario';
import { clusterFailoverPhase } from '../support/cluster-failover-phase';
import { failoverParams } from '../support/failover-params';
import { runFailoverPhases } from '../support/failover-verdict';

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
  params: failoverParams(20_000, 'cluster-node-timeout'),
  run: ({ params, workDir, log }) =>
    runFailoverPhases(clusterFailoverPhase, { ...params, killAtAcked: params.killAt }, workDir, log),
});
