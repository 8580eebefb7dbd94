import { Injectable, Logger } from '@nestjs/common';
import { logicalQueueOf, queueRegistryKey } from '../keyspace';
import { QueueService } from '../queue/queue.service';
import { promoteDue, reapExpired, type ReapOutcome } from '../scripts';
import { RuntimeHooksRegistry } from '../observability/runtime-hooks-registry';
import { FormatGate } from './format-gate';
import { warnUnlessUnreachable } from '../connection/warn-unless-unreachable';
import { execAll } from '../connection/exec-all';
import { FullRedisNotice } from '../connection/full-redis-notice';

/** Script calls per queue per tick and per kind; a backlog larger than this waits for the next tick. */
const CALLS_PER_TICK = 10;

/**
 * A registered queue with nothing in it, not paused, whose newest event is older than
 * this (or that has none) drops out of the registry, so the reapers' walk follows what
 * is live rather than every name ever used (docs/options.md, "The queue registry").
 * A producer re-registers a queue it keeps using (QueueService.register), a worker the
 * queues it serves (every tick), so a dropped queue comes back as soon as it is used.
 */
export const QUEUE_IDLE_MS = 24 * 3_600_000;

/**
 * How often each process looks for idle queues: one MULTI per registered queue, so it
 * is not done every tick. The first pass comes at a random point of the first period.
 */
export const PRUNE_EVERY_MS = 10 * 60_000;

/** Queues checked at once in a prune pass (each check is one round trip to its own slot). */
const PRUNE_PARALLEL = 32;

/**
 * Returns expired leases to pending (or dead), advances schedules whose next occurrence
 * went missing, and promotes due scheduled jobs, for every known queue, on its own timer. Runs once in every process that hosts
 * processors; the scripts are idempotent, so concurrent reapers are safe. Each process
 * starts at a random phase so reapers do not tick together.
 *
 * The timer is private on purpose: registering it with @nestjs/schedule would mean
 * importing ScheduleModule.forRoot() here, and an application that imports it too would
 * then run every one of its own @Cron and @Interval handlers twice.
 */
@Injectable()
export class Reaper {
  private readonly logger = new Logger('EchoMQ');
  private readonly formats = new FormatGate(this.logger);
  /** A full Redis refuses some of a tick's writes on every tick: said once, not per tick and queue. */
  private readonly fullRedis = new FullRedisNotice(this.logger, 'The reaper');
  /** Whether this tick met a full Redis. */
  private metFull = false;
  private starter?: NodeJS.Timeout;
  private interval?: NodeJS.Timeout;
  private ticking = false;
  private served: readonly string[] = [];
  private nextPruneAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly queues: QueueService,
    /** Told what each reap call took back (the metrics' reaped leases). */
    private readonly observers: RuntimeHooksRegistry,
  ) {}

  /** Whether the reaper is ticking (or about to start); a second start() is refused. */
  get running(): boolean {
    return this.starter !== undefined || this.interval !== undefined;
  }

  /**
   * Starts ticking; `served` are the physical queues this process serves (a partitioned queue's
   * partitions, `q#0` ...), reaped even if the registry lost them.
   */
  start(served: readonly string[] = []): void {
    if (this.running) throw new Error('The reaper is already running in this process');
    this.served = [...new Set(served)];
    this.nextPruneAt = Date.now() + Math.random() * PRUNE_EVERY_MS;
    const every = this.queues.settings.reaperIntervalMs;
    this.starter = setTimeout(() => {
      this.starter = undefined;
      this.interval = setInterval(() => void this.tick(), every);
    }, Math.random() * every);
  }

  /** More physical queues this process serves from now on (a partition its layout gained). */
  serve(more: readonly string[]): void {
    this.served = [...new Set([...this.served, ...more])];
  }

  stop(): void {
    clearTimeout(this.starter);
    clearInterval(this.interval);
    this.starter = undefined;
    this.interval = undefined;
  }

  /** One pass over every known queue. Errors are logged per queue; the next tick runs regardless. */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    this.metFull = false;
    try {
      const batch = this.queues.settings.reaperBatch;
      // Re-register the served queues every tick: a Redis that lost its data (a restart
      // without persistence) also lost the registry, and their expired leases must still be reaped.
      // A full Redis refuses the SADD: they are reaped below all the same.
      if (this.served.length > 0) {
        await this.queues.reregister(this.served).catch((error: unknown) => {
          if (!this.isFull(error)) throw error;
        });
      }
      let registered = await this.queues.listPhysicalQueues();
      if (Date.now() >= this.nextPruneAt) {
        this.nextPruneAt = Date.now() + PRUNE_EVERY_MS;
        const pruned = new Set(await this.prune(registered));
        registered = registered.filter((queue) => !pruned.has(queue));
      }
      const queues = new Set([...this.served, ...registered]);
      for (const queue of queues) {
        try {
          const ctx = this.queues.context(queue);
          if (!(await this.formats.allows(ctx))) continue;
          for (let call = 0; call < CALLS_PER_TICK && (await this.reap(queue, batch)).more; call++);
          // Before promoting: a 'skip' schedule's overdue occurrence is replaced while it still
          // waits, rather than promoted and run (docs/schedules.md, "Missed runs").
          await this.sweepSchedules(queue);
          for (let call = 0; call < CALLS_PER_TICK && (await promoteDue(ctx, batch)).more; call++);
        } catch (error) {
          this.warn(error, `Reaper on queue ${queue}: ${(error as Error).message}`);
        }
      }
      if (!this.metFull) this.fullRedis.cleared();
    } catch (error) {
      this.warn(error, `Reaper: ${(error as Error).message}`);
    } finally {
      this.ticking = false;
    }
  }

  /** One reap call on `queue`; what it took back is told to the observers. */
  private async reap(queue: string, batch: number): Promise<ReapOutcome> {
    const ctx = this.queues.context(queue);
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
   * The schedules' safety net (QueueService.sweepSchedules): one EXISTS for a queue without
   * schedules, else up to CALLS_PER_TICK chunks. Its errors are logged apart, so a schedule
   * that cannot advance never stops promotion.
   */
  private async sweepSchedules(queue: string): Promise<void> {
    try {
      await this.queues.sweepSchedules(queue, CALLS_PER_TICK);
    } catch (error) {
      this.warn(error, `Schedules of queue ${queue}: ${(error as Error).message}`);
    }
  }

  /**
   * Drops idle queues (QUEUE_IDLE_MS) from the registry and returns their names; the
   * queues this process serves are never dropped. tick() runs it every PRUNE_EVERY_MS.
   */
  async prune(registered?: readonly string[]): Promise<string[]> {
    const served = new Set(this.served);
    const candidates = (registered ?? (await this.queues.listPhysicalQueues())).filter(
      (queue) => !served.has(queue),
    );
    const pruned: string[] = [];
    for (let start = 0; start < candidates.length; start += PRUNE_PARALLEL) {
      const chunk = candidates.slice(start, start + PRUNE_PARALLEL);
      await Promise.all(
        chunk.map(async (queue) => {
          try {
            if (await this.pruneOne(queue)) {
              pruned.push(queue);
              this.formats.forget(queue);
            }
          } catch (error) {
            if (this.isFull(error)) return; // (its MULTI of reads is refused too; checked next pass)
            this.logger.warn(
              `Reaper could not check queue ${queue} for idleness: ${(error as Error).message}`,
            );
          }
        }),
      );
    }
    if (pruned.length > 0) this.logger.log(`Dropped ${pruned.length} idle queue(s) from the registry`);
    return pruned;
  }

  private async pruneOne(queue: string): Promise<boolean> {
    if (!(await this.isIdle(queue))) return false;
    const redis = this.queues.context(queue).redis;
    await redis.srem(queueRegistryKey(this.queues.settings.keyPrefix), queue);
    // A job may have arrived between the check and the SREM, from a producer that
    // registered the queue just before: look again, and put the name back if so.
    if (await this.isIdle(queue)) return true;
    await this.queues.reregister([queue]);
    return false;
  }

  /**
   * Empty in all four sets, not paused, and no event for QUEUE_IDLE_MS by the server's
   * clock: one MULTI on the queue's own slot (the stream id starts with its server-time ms).
   */
  private async isIdle(queue: string): Promise<boolean> {
    const { redis, keys } = this.queues.context(queue);
    const values = await execAll(
      redis
        .multi()
        .zcard(keys.pending)
        .zcard(keys.active)
        .zcard(keys.schedule)
        .zcard(keys.dead)
        .exists(keys.paused)
        .xrevrange(keys.events, '+', '-', 'COUNT', 1)
        .time(),
      `The idleness check of queue ${queue}`,
    );
    const [pending, active, schedule, dead, paused] = values.slice(0, 5).map(Number);
    if (pending + active + schedule + dead + paused > 0) return false;
    const newest = (values[5] as [string, string[]][])[0];
    if (!newest) return true;
    const [seconds, micros] = values[6] as [string, string];
    const nowMs = Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000);
    return nowMs - Number(newest[0].split('-')[0]) >= QUEUE_IDLE_MS;
  }
}
