import { scenario } from '../scenario';
import { clusterFailoverPhase } from '../support/cluster-failover-phase';
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
  run: ({ params, workDir, log }) =>
    runFailoverPhases(clusterFailoverPhase, { ...params, killAtAcked: params.killAt }, workDir, log),
});
