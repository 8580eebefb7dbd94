import { SentinelGroup } from '../../support/redis-sentinel';
import {
  runFailoverPhase,
  type FailoverPhaseSizes,
  type FailoverResult,
  type FailoverTarget,
} from './failover-phase';

const QUEUE = 'chaos-failover';

/** A Sentinel group as a failover target: the sentinels promote the replica, the killed node rejoins empty. */
function sentinelTarget(group: SentinelGroup): FailoverTarget {
  return {
    connection: group.connection(),
    reportsReplicaBack: false,
    async killMaster(lagMs) {
      const old = lagMs > 0 ? await group.killMasterBehindReplicas(lagMs) : await group.killMaster();
      const killedAt = Date.now();
      const master = await group.failedOverFrom(old);
      return { oldPort: old.port, promotedPort: master.port, killedAt, failedOverAt: Date.now() };
    },
    async rejoin(kill) {
      await group.restartAsReplica(kill.oldPort);
      return 'a replica';
    },
    destroy: () => group.destroy(),
  };
}

/**
 * One phase of the failover scenario: a master, one replica and three sentinels; worker and
 * producer processes reach the master through the sentinels. Once `killAtAcked` enqueues are
 * acknowledged the master is SIGKILLed with its replica `lagMs` behind (what it wrote in that
 * time is on no replica); the sentinels promote the replica, and the killed node
 * comes back (empty) as the new master's replica, as an orchestrator would restart it. Nobody
 * else is restarted or told: the children follow the new master by themselves.
 */
export async function failoverPhase(
  durable: boolean,
  sizes: FailoverPhaseSizes,
  workDir: string,
  log: (message: string) => void,
): Promise<FailoverResult> {
  const group = await SentinelGroup.start();
  return runFailoverPhase(sentinelTarget(group), QUEUE, durable, sizes, workDir, log);
}
