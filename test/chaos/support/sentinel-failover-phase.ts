import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DurableOptions } from '@app/echomq';
import { SentinelGroup } from '../../support/redis-sentinel';
import { bookOf, readLedger, type LedgerBook } from './ledger';
import { openInspector, type Inspector } from './inspector';
import { producerChild, producerFinished, workerChild, type ChildHandle } from './processes';
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

const QUEUE = 'chaos-failover';
/** What durable writes wait for: the one replica, up to a second per confirmation. */
const DURABLE: DurableOptions = { replicas: 1, timeoutMs: 1_000 };

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
): Promise<FailoverPhaseResult> {
  const name = durable ? 'durable' : 'plain';
  const ledgerDir = join(workDir, name);
  mkdirSync(ledgerDir, { recursive: true });
  const group = await SentinelGroup.start();
  const connection = group.connection();
  const module = {
    reaper: { intervalMs: 250 },
    // Ids are minted on leased node numbers, which must survive the failover too.
    ...(durable ? { durable: DURABLE } : {}),
  };
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
    let killedAt = Date.now();
    let failedOverAt = killedAt;
    let killedAtAcked = 0;
    if (reached) {
      killedAtAcked = acked;
      const old =
        sizes.lagMs > 0 ? await group.killMasterBehindReplicas(sizes.lagMs) : await group.killMaster();
      killedAt = Date.now();
      const master = await group.failedOverFrom(old);
      failedOverAt = Date.now();
      log(
        `${name}: master ${old.port} SIGKILLed at ${killedAtAcked} acks, its replica ${sizes.lagMs} ms behind; ` +
          `${master.port} promoted in ${failedOverAt - killedAt} ms`,
      );
      await group.restartAsReplica(old.port);
      log(`${name}: ${old.port} back as a replica after ${Date.now() - killedAt} ms`);
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
      const first = reached ? firstAfter(lines, kind, failedOverAt) : undefined;
      return first ? first.at - killedAt : undefined;
    };
    return {
      durable,
      outcome: await judge(book, inspector.queues, QUEUE),
      book,
      idsAckedTwice: idsAckedTwice(lines),
      killedAtAcked,
      failoverMs: failedOverAt - killedAt,
      enqueueRecoveryMs: since('ack'),
      workRecoveryMs: since('done'),
      childrenExited,
      settled: final.settled,
    };
  } finally {
    await Promise.all(children.map((child) => child.kill('SIGKILL')));
    await inspector?.close();
    await group.destroy();
  }
}
