import { EventEmitter } from 'node:events';
import { parsePhysicalQueue } from '../keyspace';
import type { ResolvedQueueOptions } from '../queue/queue-options';
import type { ClaimLoop } from './claim-loop';
import type { IsolationGate } from './isolation-gate';
import type { HandlerAges } from './job-slots';
import type { LoopPlacement } from './loop-factory';
import type { QueueLoop } from './queue-loop';
import { SharedSlots } from './shared-slots';
import type { WorkerEventEmitter, WorkerEvents } from './worker-events';

/** Builds the claim loop of one physical queue of the group. */
export type LoopMaker = (placement: LoopPlacement) => ClaimLoop;

/** The queue itself first, then its partitions by index. */
function physicalOrder(a: string, b: string): number {
  return (parsePhysicalQueue(a)?.partition ?? -1) - (parsePhysicalQueue(b)?.partition ?? -1);
}

/**
 * The claim loops of one @Processor's queue in this application: one per physical queue it
 * serves, since Redis cannot block on keys of several slots at once. An unpartitioned queue has
 * one, on the queue itself; a partitioned queue one per partition (`q#0` ...), and one on the
 * queue itself while it still holds jobs from before it was partitioned (see
 * physicalQueuesToServe). The loops share the queue's concurrency (SharedSlots) and its worker
 * events (one emitter, so @OnWorkerEvent handlers and the testing kit hear every partition), and
 * the group answers for the queue as a whole: the sums of its loops, claiming while any loop
 * claims. `view` is what ProcessorExplorer.loop(queue) hands out: the loop itself for an
 * unpartitioned queue, this group otherwise.
 */
export class PartitionLoops implements QueueLoop {
  readonly events: WorkerEventEmitter = new EventEmitter<WorkerEvents>();
  private readonly shares: SharedSlots;
  private readonly loops = new Map<string, ClaimLoop>();
  private readonly endedListeners: ((physical: string, reason: string) => void)[] = [];
  /** Whether the queue is to be claimed from here: whoever adds a loop then starts it too. */
  private wanted = false;
  /** Set by stop(): no loop is added or started any more. */
  private shutDown = false;
  readonly runner: { readonly staleSettlements: number };

  constructor(
    readonly queue: string,
    readonly options: ResolvedQueueOptions,
    gate: IsolationGate,
    private readonly make: LoopMaker,
  ) {
    this.shares = new SharedSlots(options.concurrency, gate.changes);
    const loops = this.loops;
    this.runner = {
      get staleSettlements() {
        let stale = 0;
        for (const loop of loops.values()) stale += loop.runner.staleSettlements;
        return stale;
      },
    };
  }

  /** The physical queues served here: the queue itself first, then its partitions by index. */
  get physical(): string[] {
    return [...this.loops.keys()].sort(physicalOrder);
  }

  /** Whether this group is more than one loop on the queue itself. */
  get partitioned(): boolean {
    return this.loops.size !== 1 || !this.loops.has(this.queue);
  }

  /** What ProcessorExplorer.loop(queue) hands out: the loop of an unpartitioned queue, else the group. */
  get view(): QueueLoop {
    return this.partitioned ? this : this.loops.get(this.queue)!;
  }

  /** Whether the queue is to be claimed from here (start() or startOne() called, stopClaiming() not since). */
  get serving(): boolean {
    return this.wanted && !this.shutDown;
  }

  /** Whether stop() was called: the group serves nothing more, and takes no loop. */
  get closed(): boolean {
    return this.shutDown;
  }

  has(physical: string): boolean {
    return this.loops.has(physical);
  }

  loopOf(physical: string): ClaimLoop | undefined {
    return this.loops.get(physical);
  }

  /** Each physical queue with its loop, in `physical` order. */
  entries(): [string, ClaimLoop][] {
    return this.physical.map((name) => [name, this.loops.get(name)!]);
  }

  /** The loop of `physical`, made if the group has none yet; not started (see startOne). */
  add(physical: string): ClaimLoop {
    const existing = this.loops.get(physical);
    if (existing) return existing;
    if (this.shutDown) throw new Error(`The loops of ${this.queue} were shut down; no loop is added`);
    const loop = this.make({ queue: this.queue, physical, shares: this.shares, events: this.events });
    loop.onEnded((reason) => {
      for (const listener of this.endedListeners) listener(physical, reason);
    });
    this.loops.set(physical, loop);
    return loop;
  }

  /**
   * Forgets the loop of `physical`, which must never have started: at bootstrap, the queue itself
   * turned out to need none (partitioned, and empty). Returns whether it was dropped.
   */
  drop(physical: string): boolean {
    const loop = this.loops.get(physical);
    if (!loop || loop.claiming || this.loops.size === 1) return false;
    this.loops.delete(physical);
    this.shares.remove(loop.budget);
    return true;
  }

  /** Starts every loop; loops added later start as they are added. */
  start(): void {
    if (this.shutDown) throw new Error(`The loops of ${this.queue} were shut down; they do not start again`);
    this.wanted = true;
    for (const loop of this.loops.values()) loop.start();
  }

  /** Starts the loop of one physical queue (once its registration is done). */
  startOne(physical: string): void {
    if (this.shutDown) return;
    this.wanted = true;
    this.loops.get(physical)?.start();
  }

  async stopClaiming(graceMs: number): Promise<void> {
    this.wanted = false;
    await Promise.all([...this.loops.values()].map((loop) => loop.stopClaiming(graceMs)));
  }

  async stop(graceMs: number): Promise<void> {
    this.shutDown = true;
    this.wanted = false;
    await Promise.all([...this.loops.values()].map((loop) => loop.stop(graceMs)));
  }

  /** Calls `listener` with the physical queue and the reason when an error ends one of the loops. */
  onLoopEnded(listener: (physical: string, reason: string) => void): void {
    this.endedListeners.push(listener);
  }

  onEnded(listener: (reason: string) => void): void {
    this.onLoopEnded((_physical, reason) => listener(reason));
  }

  get claiming(): boolean {
    return this.some((loop) => loop.claiming);
  }

  get busy(): boolean {
    return this.some((loop) => loop.busy);
  }

  get isolating(): boolean {
    return this.some((loop) => loop.isolating);
  }

  get inFlight(): number {
    return this.sum((loop) => loop.inFlight);
  }

  get lingering(): number {
    return this.sum((loop) => loop.lingering);
  }

  get handlerAges(): HandlerAges {
    let oldestMs: number | null = null;
    for (const loop of this.loops.values()) {
      const oldest = loop.handlerAges.oldestMs;
      if (oldest !== null && (oldestMs === null || oldest > oldestMs)) oldestMs = oldest;
    }
    return { running: this.sum((loop) => loop.handlerAges.running), oldestMs };
  }

  /** An async @OnWorkerEvent handler counts as the queue's work: one loop holds it, and `busy` reads them all. */
  trackHandlerWork(settling: Promise<void>): void {
    this.loops.values().next().value?.trackHandlerWork(settling);
  }

  /** How the application log names what serves the queue. */
  describe(): string {
    const { concurrency } = this.options;
    if (!this.partitioned) return `queue ${this.queue} (concurrency ${concurrency})`;
    return `queue ${this.queue} from ${this.physical.join(', ')} (concurrency ${concurrency}, shared)`;
  }

  private some(test: (loop: ClaimLoop) => boolean): boolean {
    for (const loop of this.loops.values()) if (test(loop)) return true;
    return false;
  }

  private sum(count: (loop: ClaimLoop) => number): number {
    let total = 0;
    for (const loop of this.loops.values()) total += count(loop);
    return total;
  }
}
