import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DurableOptions, EchoMqConnection } from '@app/echomq';
import { bookOf, readLedger, type LedgerBook } from './ledger';
import { openInspector, type Inspector } from './inspector';
import { producerChild, producerFinished, workerChildren, type ChildHandle } from './processes';
import { within } from './redis-deadline';
import { firstAfter, idsAckedTwice } from './redis-ledger-facts';
import { judge, settle, type Outcome } from './verdict';

export interface FailoverPhaseSizes {
  readonly jobs: number;
  readonly perSecond: number;
  readonly workers: number;
  /** The master is SIGKILLed once this many enqueues are acknowledged. */
  readonly killAtAcked: number;
  /** How far behind the replica is when the master dies (see SentinelGroup.killMasterBehindReplicas); 0: in step. */
  readonly lagMs: number;
  readonly leaseMs: number;
  readonly workMs: number;
}

/** What one phase (without or with durable writes) saw. */
export interface FailoverPhaseResult {
  readonly durable: boolean;
  readonly outcome: Outcome;
  readonly book: LedgerBook;
  readonly idsAckedTwice: string[];
  /** Acknowledged enqueues when the master was killed (0: the producers finished first). */
  readonly killedAtAcked: number;
  /** ms from the SIGKILL to the sentinels naming the new master. */
  readonly failoverMs: number;
  /** ms from the SIGKILL to the first enqueue acknowledged after the new master was named. */
  readonly enqueueRecoveryMs: number | undefined;
  /** ms from the SIGKILL to the first completion after the new master was named. */
  readonly workRecoveryMs: number | undefined;
  /** Child processes that exited or were restarted (none should: they follow the master by themselves). */
  readonly childrenExited: number;
  readonly settled: boolean;
}

/** A phase's result; `replicaBackMs` where the phase measures the killed node's return. */
export type FailoverResult = FailoverPhaseResult & {
  /** ms from the SIGKILL to the restarted node in sync as the new master's replica (0: no kill). */
  readonly replicaBackMs?: number;
};

/** What a master kill looked like: the killed and the promoted node, and when each step came. */
export interface MasterKill {
  readonly oldPort: number;
  readonly promotedPort: number;
  readonly killedAt: number;
  readonly failedOverAt: number;
}

/**
 * The Redis a failover phase runs on, and the two things that differ between topologies:
 * how its master dies (and a replica is promoted), and how the killed node comes back.
 */
export interface FailoverTarget {
  readonly connection: EchoMqConnection;
  /** SIGKILLs the master with its replica `lagMs` behind (0: in step) and waits for the promotion. */
  killMaster(lagMs: number): Promise<MasterKill>;
  /** Brings the killed node back as the new master's replica; returns how the log names what it came back as. */
  rejoin(kill: MasterKill): Promise<string>;
  /** Whether the phase reports when the killed node was back (the `replicaBackMs` figure). */
  readonly reportsReplicaBack: boolean;
  destroy(): Promise<void>;
}

/** What durable writes wait for: the one replica (of the shard), up to a second per confirmation. */
const DURABLE: DurableOptions = { replicas: 1, timeoutMs: 1_000 };

/**
 * Runs one failover phase on `target` (started by the caller, destroyed here): worker and
 * producer processes on `queue`; once `killAtAcked` enqueues are acknowledged the master is
 * killed, a replica promoted and the killed node brought back, as an orchestrator would. Nobody
 * else is restarted or told: the children follow the new master by themselves.
 */
export async function runFailoverPhase(
  target: FailoverTarget,
  queue: string,
  durable: boolean,
  sizes: FailoverPhaseSizes,
  workDir: string,
  log: (message: string) => void,
): Promise<FailoverResult> {
  const name = durable ? 'durable' : 'plain';
  const ledgerDir = join(workDir, name);
  const { connection } = target;
  // Ids are minted on leased node numbers, which must survive the failover too.
  const module = { reaper: { intervalMs: 250 }, ...(durable ? { durable: DURABLE } : {}) };
  let inspector: Inspector | undefined;
  const children: ChildHandle[] = [];
  try {
    mkdirSync(ledgerDir, { recursive: true });
    // A configured node: the inspector never enqueues, so it needs no lease to follow across the failover.
    inspector = await openInspector(connection, { nodeId: 0 });
    children.push(
      ...workerChildren(sizes.workers, { connection, queue, ledgerDir, leaseMs: sizes.leaseMs, module }),
    );
    await Promise.all(children.map((child) => child.start()));
    const producer = producerChild({
      connection,
      queue,
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
    let kill: MasterKill | undefined;
    let killedAtAcked = 0;
    let replicaBackMs = 0;
    if (reached) {
      killedAtAcked = acked;
      kill = await target.killMaster(sizes.lagMs);
      log(
        `${name}: master ${kill.oldPort} SIGKILLed at ${killedAtAcked} acks, its replica ${sizes.lagMs} ms behind; ` +
          `${kill.promotedPort} promoted in ${kill.failedOverAt - kill.killedAt} ms`,
      );
      const cameBackAs = await target.rejoin(kill);
      replicaBackMs = Date.now() - kill.killedAt;
      log(`${name}: ${kill.oldPort} back as ${cameBackAs} after ${replicaBackMs} ms`);
    }
    const expectedMs = (sizes.jobs / Math.max(1, sizes.perSecond)) * 1_000;
    await within(produced, expectedMs * 3 + 60_000, `${name}: the producer finishing`);
    // The leases of claims lost with the old master's replies run out before the last jobs come back.
    const final = await settle(inspector.queues, queue, sizes.leaseMs * 4 + 60_000);
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
      outcome: await judge(book, inspector.queues, queue),
      book,
      idsAckedTwice: idsAckedTwice(lines),
      killedAtAcked,
      failoverMs: kill ? kill.failedOverAt - kill.killedAt : 0,
      enqueueRecoveryMs: since('ack'),
      workRecoveryMs: since('done'),
      childrenExited,
      settled: final.settled,
      ...(target.reportsReplicaBack ? { replicaBackMs } : {}),
    };
  } finally {
    await Promise.all(children.map((child) => child.kill('SIGKILL')));
    await inspector?.close();
    await target.destroy();
  }
}
