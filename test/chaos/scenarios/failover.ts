import { scenario } from '../scenario';
import { failoverPhase } from '../support/sentinel-failover-phase';
import { failoverParams } from '../support/failover-params';
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
  params: failoverParams(30_000, 'down-after'),
  run: ({ params, workDir, log }) =>
    runFailoverPhases(failoverPhase, { ...params, killAtAcked: params.killAt }, workDir, log),
});
