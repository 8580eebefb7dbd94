import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DurableOptions, EchoMqConnection } from '@app/echomq';
import { queueKeys } from '@app/echomq/internal';
import { RedisCluster, type ClusterMaster } from '../../support/redis-cluster';
import { bookOf, readLedger } from './ledger';
import { openInspector, type Inspector } from './inspector';
import { producerChild, producerFinished, workerChild, type ChildHandle } from './processes';
import { within } from './redis-deadline';
import { firstAfter, idsAckedTwice } from './redis-ledger-facts';
import type { FailoverPhaseResult, FailoverPhaseSizes } from './sentinel-failover-phase';
import { judge, settle } from './verdict';

const QUEUE = 'chaos-cluster-failover';
/** What durable writes wait for: the shard's one replica, up to a second per confirmation. */
const DURABLE: DurableOptions = { replicas: 1, timeoutMs: 1_000 };

/** What one phase saw, and when the killed node was back as the new master's replica. */
export interface ClusterFailoverPhaseResult extends FailoverPhaseResult {
  /** ms from the SIGKILL to the restarted node in sync as the new master's replica (0: no kill). */
  readonly replicaBackMs: number;
}

/** What the kill looked like: the master of the queue's slot, its replica and when each step came. */
interface Kill {
  readonly old: ClusterMaster;
  readonly promoted: ClusterMaster;
  readonly killedAt: number;
  readonly failedOverAt: number;
}

/**
 * SIGKILLs the master serving `queue` with its replica `lagMs` behind: the replica is stopped
 * (SIGSTOP), the master drops its link (CLIENT KILL TYPE replica), writes go on for `lagMs` and
 * reach only the master, then it is SIGKILLed and the replica resumed (SIGCONT). `lagMs` stays
 * under cluster-node-timeout, so nobody thinks the replica failed; it is then promoted.
 */
async function killMasterBehindReplica(cluster: RedisCluster, queue: string, lagMs: number): Promise<Kill> {
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
  return { old, promoted, killedAt, failedOverAt: Date.now() };
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
  const name = durable ? 'durable' : 'plain';
  const ledgerDir = join(workDir, name);
  mkdirSync(ledgerDir, { recursive: true });
  const cluster = await RedisCluster.start(3, { replicas: 1 });
  const connection: EchoMqConnection = { cluster: { nodes: cluster.nodes } };
  const module = { reaper: { intervalMs: 250 }, ...(durable ? { durable: DURABLE } : {}) };
  let inspector: Inspector | undefined;
  const children: ChildHandle[] = [];
  try {
    // A configured node: the inspector never enqueues, so it needs no lease to follow across the failover.
    inspector = await openInspector(connection, { nodeId: 0 });
    const workerConfig = {
      connection,
      queue: QUEUE,
      ledgerDir,
      concurrency: 20,
      leaseMs: sizes.leaseMs,
      maxAttempts: 1_000,
      module,
    };
    for (let i = 0; i < sizes.workers; i++) children.push(workerChild(workerConfig));
    await Promise.all(children.map((child) => child.start()));
    const producer = producerChild({
      connection,
      queue: QUEUE,
      ledgerDir,
      count: sizes.jobs,
      inFlight: 50,
      perSecond: sizes.perSecond,
      job: { name: 'work', data: { ms: sizes.workMs } },
      idempotencyPrefix: name,
      retryDelayMs: 100,
      module,
    });
    let acked = 0;
    const killPoint = new Promise<void>((resolve) => {
      producer.onMessage((message) => {
        if (message.type === 'ready') return;
        acked = message.acked;
        if (acked >= sizes.killAtAcked) resolve();
      });
    });
    children.push(producer);
    await producer.start();
    const produced = producerFinished(producer);

    const reached = await Promise.race([killPoint.then(() => true), produced.then(() => false)]);
    let kill: Kill | undefined;
    let killedAtAcked = 0;
    let replicaBackMs = 0;
    if (reached) {
      killedAtAcked = acked;
      kill = await killMasterBehindReplica(cluster, QUEUE, sizes.lagMs);
      log(
        `${name}: master ${kill.old.port} SIGKILLed at ${killedAtAcked} acks, its replica ${sizes.lagMs} ms ` +
          `behind; ${kill.promoted.port} promoted in ${kill.failedOverAt - kill.killedAt} ms`,
      );
      await cluster.faults.restart(kill.old.port);
      await cluster.faults.waitForReplica(kill.promoted.port);
      replicaBackMs = Date.now() - kill.killedAt;
      log(`${name}: ${kill.old.port} back as ${kill.promoted.port}'s replica after ${replicaBackMs} ms`);
    }
    const expectedMs = (sizes.jobs / Math.max(1, sizes.perSecond)) * 1_000;
    await within(produced, expectedMs * 3 + 60_000, `${name}: the producer finishing`);
    // The leases of claims lost with the old master's replies run out before the last jobs come back.
    const final = await settle(inspector.queues, QUEUE, sizes.leaseMs * 4 + 60_000);
    const childrenExited = children.filter(
      (child) => child.pids.length > 1 || (child !== producer && !child.running),
    ).length;
    await Promise.all(children.map((child) => child.kill('SIGTERM')));

    const lines = readLedger(ledgerDir);
    const book = bookOf(lines);
    const since = (kind: 'done' | 'ack'): number | undefined => {
      const first = kill ? firstAfter(lines, kind, kill.failedOverAt) : undefined;
      return first && kill ? first.at - kill.killedAt : undefined;
    };
    return {
      durable,
      outcome: await judge(book, inspector.queues, QUEUE),
      book,
      idsAckedTwice: idsAckedTwice(lines),
      killedAtAcked,
      failoverMs: kill ? kill.failedOverAt - kill.killedAt : 0,
      enqueueRecoveryMs: since('ack'),
      workRecoveryMs: since('done'),
      childrenExited,
      settled: final.settled,
      replicaBackMs,
    };
  } finally {
    await Promise.all(children.map((child) => child.kill('SIGKILL')));
    await inspector?.close();
    await cluster.destroy();
  }
}
