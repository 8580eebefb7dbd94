import { Injectable, Logger } from '@nestjs/common';
import { logicalQueueOf } from '../keyspace';
import { monotonicMs } from '../monotonic';
import { QueueService } from '../queue/queue.service';
import { promoteDue, readDeadlines, reapExpired, type QueueDeadlines, type ScriptContext } from '../scripts';
import { RuntimeHooksRegistry } from '../observability/runtime-hooks-registry';
import { FormatGate } from './format-gate';
import { warnUnlessUnreachable } from '../connection/warn-unless-unreachable';
import { FullRedisNotice } from '../connection/full-redis-notice';
import { QueuePruner } from './queue-pruner';
import { ReaperAgenda } from './reaper-agenda';

export { QUEUE_IDLE_MS } from './queue-pruner';

/** Script calls per queue per look and per kind; a backlog larger than this is looked at again at once. */
const CALLS_PER_LOOK = 10;

/**
 * How often each process looks for idle queues: one MULTI per registered queue, so it
 * is not done every look. The first pass comes at a random point of the first period.
 */
export const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * The fewest ms between two looks at one queue that found nothing to do but a deadline soon:
 * leases of one crash expire a few ms apart, and one look reaps all that are due.
 */
const LOOK_GAP_MS = 100;
/**
 * How long after a scheduled job's run-at the reaper promotes it: the workers' claims promote
 * due jobs on time; the reaper moves what no claim took (busy or absent workers) this much later.
 */
const PROMOTE_GRACE_MS = 1_000;
/** After a look failed (Redis unreachable, a refusal), the queue is looked at again after this, at most. */
const RETRY_AFTER_FAILURE_MS = 1_000;
/** How long before the planned look other queues due are taken in the same turn. */
const TURN_SLACK_MS = 5;

/**
 * Returns expired leases to pending (or dead), advances schedules whose next occurrence
 * went missing, and promotes due scheduled jobs, for every known queue. Runs once in every
 * process that hosts processors; the scripts are idempotent, so concurrent reapers are safe.
 *
 * It is driven by deadlines, not a fixed tick: each look at a queue is one read-only script
 * (the earliest lease deadline, the earliest run-at, whether it has schedules, its data
 * format), and the next look is planned for the earliest of those deadlines, but never later
 * than `reaper.intervalMs` or the queue's lease. That cap is what finds leases other processes
 * took since: a lease taken after a look ends no earlier than one lease later, by when the
 * next look has seen it. An idle queue costs one command per interval; the registry is read
 * (SMEMBERS) once per interval, and the queues this process serves are written back only when
 * it finds them missing (a Redis that lost its data). Processes start at a random phase.
 *
 * The timer is private on purpose: registering it with @nestjs/schedule would mean
 * importing ScheduleModule.forRoot() here, and an application that imports it too would
 * then run every one of its own @Cron and @Interval handlers twice.
 */
@Injectable()
export class Reaper {
  private readonly logger = new Logger('EchoMQ');
  private readonly formats = new FormatGate(this.logger);
  /** A full Redis refuses some of a look's writes on every look: said once, not per look and queue. */
  private readonly fullRedis = new FullRedisNotice(this.logger, 'The reaper');
  private readonly pruner: QueuePruner;
  private readonly agenda = new ReaperAgenda();
  /** Whether this turn met a full Redis. */
  private metFull = false;
  private started = false;
  private timer?: NodeJS.Timeout;
  private ticking = false;
  private served: readonly string[] = [];
  private nextPruneAt = Number.POSITIVE_INFINITY;
  /** When the registry is read next (monotonic ms). */
  private nextRegistryAt = 0;

  constructor(
    private readonly queues: QueueService,
    /** Told what each reap call took back (the metrics' reaped leases). */
    private readonly observers: RuntimeHooksRegistry,
  ) {
    this.pruner = new QueuePruner(queues, this.logger, (error) => this.isFull(error));
  }

  /** Whether the reaper is running; a second start() is refused. */
  get running(): boolean {
    return this.started;
  }

  /**
   * Starts looking; `served` are the physical queues this process serves (a partitioned queue's
   * partitions, `q#0` ...), reaped even if the registry lost them. The first looks come at a
   * random point of the first second (or interval, when shorter).
   */
  start(served: readonly string[] = []): void {
    if (this.started) throw new Error('The reaper is already running in this process');
    this.started = true;
    this.served = [...new Set(served)];
    this.nextPruneAt = Date.now() + Math.random() * PRUNE_EVERY_MS;
    const first = monotonicMs() + Math.random() * Math.min(1_000, this.intervalMs);
    this.nextRegistryAt = first;
    for (const queue of this.served) this.agenda.byAt(queue, first);
    this.arm();
  }

  /** More physical queues this process serves from now on (a partition its layout gained): looked at now. */
  serve(more: readonly string[]): void {
    this.served = [...new Set([...this.served, ...more])];
    for (const queue of more) this.agenda.byAt(queue, monotonicMs());
    this.arm();
  }

  stop(): void {
    this.started = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One look at every known queue now, the registry read first. Errors are logged per queue. */
  tick(): Promise<void> {
    return this.turn(true);
  }

  private get intervalMs(): number {
    return this.queues.settings.reaperIntervalMs;
  }

  /** Sleeps until the soonest planned look (or registry read). */
  private arm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.started) return;
    const soonest = Math.min(this.agenda.soonest() ?? Number.POSITIVE_INFINITY, this.nextRegistryAt);
    this.timer = setTimeout(() => void this.turn(false), Math.max(0, soonest - monotonicMs()));
  }

  /** Looks at the queues that are due (every known one when `all`), one after the other. */
  private async turn(all: boolean): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    this.metFull = false;
    try {
      if (all || monotonicMs() >= this.nextRegistryAt) await this.readRegistry();
      const queues = all ? this.agenda.queues() : this.agenda.dueBy(monotonicMs() + TURN_SLACK_MS);
      for (const queue of queues) await this.look(queue);
      if (!this.metFull) this.fullRedis.cleared();
    } finally {
      this.ticking = false;
      this.arm();
    }
  }

  /**
   * Reads the registry: queues new to it are looked at now, queues gone from it (and not served
   * here) are forgotten, served queues it lost are written back. Prunes idle queues once per period.
   */
  private async readRegistry(): Promise<void> {
    this.nextRegistryAt = monotonicMs() + this.intervalMs;
    try {
      let registered = await this.queues.listPhysicalQueues();
      const listed = new Set(registered);
      // A Redis that lost its data (a restart without persistence) also lost the registry; the
      // served queues' leases must still be reaped by every process, so they go back in.
      const lost = this.served.filter((queue) => !listed.has(queue));
      if (lost.length > 0) {
        await this.queues.reregister(lost).catch((error: unknown) => {
          if (!this.isFull(error)) throw error;
        });
      }
      if (Date.now() >= this.nextPruneAt) {
        this.nextPruneAt = Date.now() + PRUNE_EVERY_MS;
        const pruned = new Set(await this.prune(registered));
        registered = registered.filter((queue) => !pruned.has(queue));
      }
      const known = new Set([...this.served, ...registered]);
      const now = monotonicMs();
      // A queue new to this reaper is looked at now; the others keep the look planned for them.
      for (const queue of known) if (!this.agenda.has(queue)) this.agenda.set(queue, now);
      for (const queue of this.agenda.queues()) if (!known.has(queue)) this.agenda.drop(queue);
    } catch (error) {
      this.warn(error, `Reaper: ${(error as Error).message}`);
      this.nextRegistryAt = monotonicMs() + Math.min(this.intervalMs, RETRY_AFTER_FAILURE_MS);
    }
  }

  /** One look at `queue`: read its deadlines, do what is due, plan the next look. */
  private async look(queue: string): Promise<void> {
    const lookedAt = monotonicMs();
    try {
      const ctx = this.queues.context(queue);
      const deadlines = await readDeadlines(ctx);
      if (!this.formats.admits(queue, deadlines.format)) {
        this.agenda.set(queue, lookedAt + this.capFor(queue));
        return;
      }
      const backlog = await this.work(queue, ctx, deadlines);
      this.agenda.set(queue, backlog ? monotonicMs() : this.nextLook(queue, lookedAt, deadlines));
    } catch (error) {
      this.warn(error, `Reaper on queue ${queue}: ${(error as Error).message}`);
      this.agenda.set(queue, lookedAt + Math.min(this.capFor(queue), RETRY_AFTER_FAILURE_MS));
    }
  }

  /**
   * Reaps expired leases, sweeps the schedules, promotes due jobs: each only when the look saw it
   * due. True when more was left than the calls of one look move, or when something moved (the
   * heads changed: the next look reads them again at once).
   */
  private async work(queue: string, ctx: ScriptContext, deadlines: QueueDeadlines): Promise<boolean> {
    const batch = this.queues.settings.reaperBatch;
    const { serverNow, leaseDeadline, nextRunAt } = deadlines;
    let moved = false;
    if (leaseDeadline !== null && leaseDeadline <= serverNow) {
      for (let call = 0; call < CALLS_PER_LOOK; call++) {
        const outcome = await this.reap(queue, ctx, batch);
        moved ||= outcome.toPending + outcome.toDead > 0;
        if (!outcome.more) break;
      }
    }
    // Before promoting: a 'skip' schedule's overdue occurrence is replaced while it still
    // waits, rather than promoted and run (docs/schedules.md, "Missed runs").
    if (deadlines.hasSchedules) await this.sweepSchedules(queue);
    if (nextRunAt !== null && nextRunAt + PROMOTE_GRACE_MS <= serverNow) {
      for (let call = 0; call < CALLS_PER_LOOK; call++) {
        const outcome = await promoteDue(ctx, batch);
        moved ||= outcome.promoted > 0;
        if (!outcome.more) break;
      }
    }
    return moved;
  }

  /**
   * The next look: the earliest lease deadline, or a scheduled run's promotion grace, mapped from
   * the server's clock onto this process's, no later than the queue's cap and no sooner than
   * LOOK_GAP_MS after this look.
   */
  private nextLook(queue: string, lookedAt: number, deadlines: QueueDeadlines): number {
    const { serverNow, leaseDeadline, nextRunAt } = deadlines;
    let next = lookedAt + this.capFor(queue);
    // +1: a lease is expired once the server clock has passed its deadline.
    if (leaseDeadline !== null) next = Math.min(next, lookedAt + (leaseDeadline - serverNow) + 1);
    if (nextRunAt !== null) next = Math.min(next, lookedAt + (nextRunAt + PROMOTE_GRACE_MS - serverNow));
    return Math.max(next, lookedAt + LOOK_GAP_MS);
  }

  /**
   * The longest `queue` goes without a look: the reaper's interval, or the queue's lease when
   * shorter, so a lease taken just after a look (by any process with this lease) is seen before it ends.
   */
  private capFor(queue: string): number {
    return Math.min(this.intervalMs, this.queues.queueOptions(queue).leaseMs);
  }

  /** One reap call on `queue`; what it took back is told to the observers. */
  private async reap(queue: string, ctx: ScriptContext, batch: number) {
    const outcome = await reapExpired(ctx, batch, this.queues.queueOptions(queue));
    if (outcome.toPending + outcome.toDead > 0) {
      // Observers count a partitioned queue as one (metrics label the queue users name).
      this.observers.reaped(logicalQueueOf(queue), outcome.toPending, outcome.toDead);
    }
    return outcome;
  }

  /** Whether `error` is a full Redis's refusal (said once for the run of them, see FullRedisNotice). */
  private isFull(error: unknown): boolean {
    if (!this.fullRedis.met(error)) return false;
    this.metFull = true;
    return true;
  }

  private warn(error: unknown, message: string): void {
    if (!this.isFull(error)) warnUnlessUnreachable(this.logger, error, message);
  }

  /**
   * The schedules' safety net (QueueService.sweepSchedules): up to CALLS_PER_LOOK chunks, for a
   * queue the look found schedules on. Its errors are logged apart, so a schedule that cannot
   * advance never stops promotion.
   */
  private async sweepSchedules(queue: string): Promise<void> {
    try {
      await this.queues.sweepSchedules(queue, CALLS_PER_LOOK);
    } catch (error) {
      this.warn(error, `Schedules of queue ${queue}: ${(error as Error).message}`);
    }
  }

  /**
   * Drops idle queues (QUEUE_IDLE_MS) from the registry and returns their names; the
   * queues this process serves are never dropped. The registry read runs it every PRUNE_EVERY_MS.
   */
  async prune(registered?: readonly string[]): Promise<string[]> {
    const served = new Set(this.served);
    const candidates = (registered ?? (await this.queues.listPhysicalQueues())).filter(
      (queue) => !served.has(queue),
    );
    const pruned = await this.pruner.prune(candidates);
    for (const queue of pruned) {
      this.formats.forget(queue);
      this.agenda.drop(queue);
    }
    return pruned;
  }
}
