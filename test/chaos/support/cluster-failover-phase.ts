import { queueKeys } from '@app/echomq/internal';
import { RedisCluster } from '../../support/redis-cluster';
import {
  runFailoverPhase,
  type FailoverPhaseResult,
  type FailoverPhaseSizes,
  type FailoverTarget,
  type MasterKill,
} from './failover-phase';

const QUEUE = 'chaos-cluster-failover';

/** What one phase saw, and when the killed node was back as the new master's replica. */
export interface ClusterFailoverPhaseResult extends FailoverPhaseResult {
  /** ms from the SIGKILL to the restarted node in sync as the new master's replica (0: no kill). */
  readonly replicaBackMs: number;
}

/**
 * SIGKILLs the master serving `queue` with its replica `lagMs` behind: the replica is stopped
 * (SIGSTOP), the master drops its link (CLIENT KILL TYPE replica), writes go on for `lagMs` and
 * reach only the master, then it is SIGKILLed and the replica resumed (SIGCONT). `lagMs` stays
 * under cluster-node-timeout, so nobody thinks the replica failed; it is then promoted.
 */
async function killMasterBehindReplica(
  cluster: RedisCluster,
  queue: string,
  lagMs: number,
): Promise<MasterKill> {
  const old = await cluster.ownerOf(await cluster.slotOf(queueKeys(queue).pending));
  const replica = await cluster.replicaOf(old.port);
  if (lagMs > 0) {
    cluster.faults.pause(replica);
    await cluster.admin(old.port).client('KILL', 'TYPE', 'replica');
    await new Promise((resolve) => setTimeout(resolve, lagMs));
  }
  try {
    await cluster.faults.kill(old.port);
  } finally {
    if (lagMs > 0) cluster.faults.resume(replica);
  }
  const killedAt = Date.now();
  const promoted = await cluster.faults.waitForPromotion(old.port);
  return { oldPort: old.port, promotedPort: promoted.port, killedAt, failedOverAt: Date.now() };
}

/** A cluster as a failover target: the queue's master dies, and comes back on its port as the promoted node's replica. */
function clusterTarget(cluster: RedisCluster): FailoverTarget {
  return {
    connection: { cluster: { nodes: cluster.nodes } },
    reportsReplicaBack: true,
    killMaster: (lagMs) => killMasterBehindReplica(cluster, QUEUE, lagMs),
    async rejoin(kill) {
      await cluster.faults.restart(kill.oldPort);
      await cluster.faults.waitForReplica(kill.promotedPort);
      return `${kill.promotedPort}'s replica`;
    },
    destroy: () => cluster.destroy(),
  };
}

/**
 * One phase of the cluster-failover scenario: a cluster of 3 masters with a replica each
 * (cluster-node-timeout 1,000 ms); worker and producer processes reach it as a cluster. Once
 * `killAtAcked` enqueues are acknowledged the master serving the queue's slot is SIGKILLed with
 * its replica `lagMs` behind; the replica is promoted, and the killed node comes back on its
 * port (empty) and rejoins as the new master's replica, as an orchestrator would restart it.
 * Nobody else is restarted or told: the children follow the new master by themselves.
 */
export async function clusterFailoverPhase(
  durable: boolean,
  sizes: FailoverPhaseSizes,
  workDir: string,
  log: (message: string) => void,
): Promise<ClusterFailoverPhaseResult> {
  const cluster = await RedisCluster.start(3, { replicas: 1 });
  const result = await runFailoverPhase(clusterTarget(cluster), QUEUE, durable, sizes, workDir, log);
  return { ...result, replicaBackMs: result.replicaBackMs ?? 0 };
}
