import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { RedisServer } from '../../support/redis-server';
import { bookOf, readLedger, type LedgerBook } from './ledger';
import { openInspector } from './inspector';
import { producerChild, producerFinished, workerChildren, type ChildHandle } from './processes';
import { AofTail } from './redis-aof-cut';
import { within } from './redis-deadline';
import { firstAfter, idsAckedTwice } from './redis-ledger-facts';
import { judge, settle, type Outcome } from './verdict';

export type AppendFsync = 'always' | 'everysec';

export interface CrashPhaseSizes {
  readonly jobs: number;
  readonly perSecond: number;
  readonly workers: number;
  readonly kills: number;
  readonly downMs: number;
  readonly leaseMs: number;
  readonly workMs: number;
  /** everysec only: after each kill the AOF is cut back to its length this long before (0: not cut). */
  readonly cutMs: number;
}

/** What one phase (one appendfsync mode) saw. */
export interface CrashPhaseResult {
  readonly mode: AppendFsync;
  readonly outcome: Outcome;
  readonly book: LedgerBook;
  /** Ids returned for two logical jobs. */
  readonly idsAckedTwice: string[];
  /** Kills of redis-server that happened (each followed by a restart on the same data). */
  readonly kills: number;
  /** Per restart: ms from the restarted Redis answering to the first completion after it. */
  readonly recoveryMs: number[];
  /** Per restart: ms from the restart to the first acknowledged enqueue after it. */
  readonly enqueueRecoveryMs: number[];
  /** Bytes of AOF the simulated power cuts took away (everysec with cutMs). */
  readonly cutBytes: number;
  /** Worker processes that exited (none should: they reconnect by themselves). */
  readonly workersExited: number;
  readonly settled: boolean;
}

const QUEUE = 'chaos-redis-crash';
const PRODUCERS = 2;

/**
 * One phase of the Redis-crash scenario: a Redis with AOF in one appendfsync mode, workers and
 * two producers running, and redis-server SIGKILLed `kills` times (spread over the enqueues:
 * after each 1/(kills+1) of them) and restarted on its own data after `downMs`; with everysec
 * and `cutMs`, on its data as a power cut would leave it (redis-aof-cut.ts). Nobody else is
 * restarted: the producers retry their unacknowledged enqueues and the workers reconnect.
 */
export async function crashPhase(
  mode: AppendFsync,
  sizes: CrashPhaseSizes,
  workDir: string,
  log: (message: string) => void,
): Promise<CrashPhaseResult> {
  const ledgerDir = join(workDir, mode);
  mkdirSync(ledgerDir, { recursive: true });
  // No AOF rewrite during the run, so the file a power cut is simulated on stays the same.
  const redis = await RedisServer.start({
    args: ['--appendonly', 'yes', '--appendfsync', mode, '--auto-aof-rewrite-percentage', '0'],
  });
  const connection = { url: redis.url };
  const tail = mode === 'everysec' && sizes.cutMs > 0 ? await AofTail.watch(redis.url) : undefined;
  const inspector = await openInspector(connection);
  const workers: ChildHandle[] = [];
  const producers: ChildHandle[] = [];
  try {
    workers.push(
      ...workerChildren(sizes.workers, {
        connection,
        queue: QUEUE,
        ledgerDir,
        leaseMs: sizes.leaseMs,
        module: { reaper: { intervalMs: 250 } },
      }),
    );
    await Promise.all(workers.map((worker) => worker.start()));
    const progress = new AckProgress();
    for (let i = 0; i < PRODUCERS; i++) {
      const producer = producerChild({
        connection,
        queue: QUEUE,
        ledgerDir,
        count: Math.ceil(sizes.jobs / PRODUCERS),
        inFlight: 50,
        perSecond: Math.ceil(sizes.perSecond / PRODUCERS),
        job: { name: 'work', data: { ms: sizes.workMs } },
        idempotencyPrefix: `${mode}-p${i}`,
        retryDelayMs: 100,
      });
      progress.follow(producer);
      producers.push(producer);
    }
    await Promise.all(producers.map((producer) => producer.start()));
    const produced = Promise.all(producers.map(producerFinished));

    const restarts: number[] = [];
    let cutBytes = 0;
    const total = Math.ceil(sizes.jobs / PRODUCERS) * PRODUCERS;
    for (let k = 1; k <= sizes.kills; k++) {
      // A producer that dies ends the wait too (its rejection fails the phase).
      const reached = await Promise.race([
        progress.reached((total * k) / (sizes.kills + 1)),
        produced.then(() => false),
      ]);
      if (!reached) break; // the producers finished first: a kill now would not be mid-run
      await redis.stop();
      const cut = tail?.cutBack(sizes.cutMs) ?? 0;
      cutBytes += cut;
      log(
        `${mode}: redis-server SIGKILLed at ${progress.total} acknowledged enqueues` +
          (tail ? `; its AOF cut back ${sizes.cutMs} ms (${cut} bytes)` : ''),
      );
      await new Promise((resolve) => setTimeout(resolve, sizes.downMs));
      await redis.restart();
      restarts.push(Date.now());
    }
    const expectedMs = (sizes.jobs / Math.max(1, sizes.perSecond)) * 1_000 + sizes.kills * sizes.downMs;
    await within(produced, expectedMs * 3 + 60_000, `${mode}: the producers finishing`);
    const final = await settle(inspector.queues, QUEUE, 10 * 60_000);
    const workersExited = workers.filter((worker) => !worker.running || worker.pids.length > 1).length;
    await Promise.all(workers.map((worker) => worker.kill('SIGTERM')));

    const lines = readLedger(ledgerDir);
    const book = bookOf(lines);
    const sinceRestart = (kind: 'done' | 'ack'): number[] =>
      restarts.flatMap((at) => {
        const first = firstAfter(lines, kind, at);
        return first ? [first.at - at] : [];
      });
    return {
      mode,
      outcome: await judge(book, inspector.queues, QUEUE),
      book,
      idsAckedTwice: idsAckedTwice(lines),
      kills: restarts.length,
      cutBytes,
      recoveryMs: sinceRestart('done'),
      enqueueRecoveryMs: sinceRestart('ack'),
      workersExited,
      settled: final.settled,
    };
  } finally {
    tail?.stop();
    await Promise.all([...workers, ...producers].map((child) => child.kill('SIGKILL')));
    await inspector.close();
    await redis.destroy();
  }
}

/** The producers' acknowledged enqueues so far, from their progress reports. */
class AckProgress {
  private readonly acked = new Map<ChildHandle, number>();
  private readonly finished = new Set<ChildHandle>();
  private readonly waiters: (() => void)[] = [];
  private producers = 0;

  get total(): number {
    let sum = 0;
    for (const count of this.acked.values()) sum += count;
    return sum;
  }

  follow(producer: ChildHandle): void {
    this.producers += 1;
    producer.onMessage((message) => {
      if (message.type === 'ready') return;
      this.acked.set(producer, message.acked);
      if (message.type === 'finished') this.finished.add(producer);
      this.waiters.splice(0).forEach((wake) => wake());
    });
  }

  /** Resolves true once `count` enqueues are acknowledged, false if the producers all finish before. */
  async reached(count: number): Promise<boolean> {
    for (;;) {
      if (this.finished.size === this.producers) return false;
      if (this.total >= count) return true;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}
