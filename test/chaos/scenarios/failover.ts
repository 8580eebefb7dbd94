import { scenario } from '../scenario';
import { failoverPhase } from '../support/sentinel-failover-phase';
import { runFailoverPhases } from '../support/failover-verdict';

/**
 * Scenario 9: Redis Sentinel (one master, one replica, three sentinels) with the master
 * SIGKILLed mid-run, once with plain writes and once with durable writes (WAIT for the
 * replica). Replication is asynchronous, and the master dies with its replica `lagMs` behind:
 * without durable writes, the enqueues acknowledged in that span are on no replica and are
 * lost, and so are the claims and completions of that span, whose fencing tokens the new
 * master hands out again (a job completed twice under one token). Both are reported, not
 * failed. With durable writes an enqueue is acknowledged only once the replica has it and a
 * handler starts only once its claim is replicated: no acknowledged enqueue is lost and no
 * job is completed twice under one token. Either way every process follows the new master by
 * itself, every acknowledged job ends, and no id is handed out twice.
 */
export const failover = scenario({
  name: 'failover',
  summary:
    'the Sentinel-watched master SIGKILLed mid-run, without and with durable writes: everyone follows the new master; with durable writes no acknowledged enqueue is lost and no token completes twice',
  params: {
    jobs: { full: 30_000, quick: 2_000, doc: 'jobs enqueued per phase (plain, then durable)' },
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
      doc: 'how far the replica is behind when the master dies: writes of that span reach only the master (under the 1 s down-after)',
    },
    leaseMs: { full: 3_000, quick: 2_000, doc: "the processor's lease" },
    workMs: {
      full: 50,
      quick: 100,
      doc: 'each handler sleeps this long: the workers (20 slots each) fall behind the producer, so jobs wait in pending and claims at the kill take jobs the replica already has',
    },
  },
  run: ({ params, workDir, log }) =>
    runFailoverPhases(failoverPhase, { ...params, killAtAcked: params.killAt }, workDir, log),
});
