import { Logger } from '@nestjs/common';
import { FullRedisNotice } from '../connection/full-redis-notice';
import type { RedisConnections } from '../connection/redis-connections';
import { isTransientRedisError } from '../errors';
import { queueKeys, queueRegistryKey } from '../keyspace';
import { monotonicMs } from '../monotonic';
import type { ScriptContext } from '../scripts';
import { isOutOfMemoryReply, typedOutOfMemory } from '../scripts/reply-errors';
import type { FlowLimits } from '../scripts/set-limits';
import { writeConfiguredLimits } from './boot-limits';
import { checkDataFormat, ensureDataFormat } from './data-format';
import { describeLimit, FLOW_LIMIT_KEYS } from './flow-limits';

/**
 * How often a process writes a queue it uses into the registry again: the reaper drops
 * queues that went idle, and a long-lived producer must bring its queue back.
 */
const REREGISTER_EVERY_MS = 60_000;

/** How often a registration that a full Redis refused is tried again, in the background. */
export const REGISTER_AGAIN_WHEN_FULL_MS = 1_000;

/**
 * Readies queues for this process, once and then once a minute while in use: the server is
 * a Redis new enough, the queue's data format is one this code knows (recorded on first
 * use), and the queue is in the registry that reapers and tools read (docs/upgrading.md).
 * The first time, it also writes the shared limits this process configures for the queue
 * (docs/options.md, "Limits live in Redis"); not every minute, which would undo an admin's
 * setLimits in a minute. An admin setLimits from this process counts as that write.
 *
 * One registration of a queue runs at a time: callers that arrive while it runs (several
 * first enqueues, the processor explorer and the bootstrap write) share it, so the stored
 * limits are compared, written and warned about once.
 *
 * A full Redis (maxmemory reached, noeviction) refuses what registration writes. The queue is
 * then used all the same, its format read instead of recorded, so a worker that boots while
 * Redis is full serves its queues (which frees room), and an enqueue meets the refusal in its
 * own script (RedisOutOfMemoryError). What was refused is written by a background retry every
 * REGISTER_AGAIN_WHEN_FULL_MS until Redis has room, not by the queue's next use: a worker-only
 * process has no next use, and a producer hammering a full Redis would repeat the whole
 * registration before each refused enqueue. Configured limits that wait so are warned about
 * once; they land as soon as there is room, as if the process booted then (an admin's
 * setLimits from this process meanwhile still wins, and one from another process is
 * overwritten with the usual warning, as a boot would).
 */
export class QueueRegistration {
  /** When this process last registered each queue (monotonic ms). */
  private readonly registered = new Map<string, number>();
  /** Queues whose configured limits this process has written (or an admin call replaced). */
  private readonly limitsWritten = new Set<string>();
  /** The registration of each queue running now, shared by every caller meanwhile. */
  private readonly running = new Map<string, Promise<void>>();
  /**
   * Bumped by forget(): a registration that began before it wrote the configuration as it
   * was, so it must not mark the new one written.
   */
  private readonly generations = new Map<string, number>();
  /** Queues whose registration a full Redis refused in part, with the context to finish it in. */
  private readonly owed = new Map<string, ScriptContext>();
  /** Per queue whose configured limits wait for room: says so once per full episode. */
  private readonly notices = new Map<string, FullRedisNotice>();
  private retryTimer?: NodeJS.Timeout;
  private closed = false;
  private readonly logger = new Logger('EchoMQ');

  constructor(
    private readonly connections: RedisConnections,
    private readonly keyPrefix: string,
    /** The shared limits this process's configuration gives a queue (configuredLimits). */
    private readonly limitsOf: (queue: string) => Partial<FlowLimits>,
  ) {
    connections.beforeClose(() => {
      this.closed = true;
      clearTimeout(this.retryTimer);
      return Promise.resolve();
    });
  }

  /**
   * Makes the next register() of a queue a full one, its limits written again: its
   * configuration changed (a @Processor's options were recorded after a producer used it).
   */
  forget(queue: string): void {
    this.registered.delete(queue);
    this.limitsWritten.delete(queue);
    this.running.delete(queue);
    this.owed.delete(queue);
    this.generations.set(queue, this.generation(queue) + 1);
  }

  /** False while a registration that a full Redis refused waits for its background retry. */
  needed(queue: string): boolean {
    // A server its last check refused (requireNoEviction, its version) is asked about on every
    // use: each call fails at once, and a setting fixed since is found (see ConnectionCheck).
    if (this.connections.serverConfig.refused || this.connections.redisVersion.refused) return true;
    if (this.owed.has(queue)) return false;
    const at = this.registered.get(queue);
    return at === undefined || monotonicMs() - at > REREGISTER_EVERY_MS;
  }

  /** @throws RedisVersionError, EvictionPolicyError or DataFormatError, having written nothing. */
  async register(ctx: ScriptContext): Promise<void> {
    const queue = ctx.keys.queue;
    const running = this.running.get(queue);
    if (running) return running;
    if (!this.needed(queue)) return;
    return this.start(ctx);
  }

  /**
   * An admin call is about to write the queue's limits: this process's configured limits must
   * not overwrite them at its next registration. A registration running now finishes first, so
   * its boot write lands before the admin's, not after.
   */
  async yieldLimits(queue: string): Promise<void> {
    // Its failure is its callers' to report; the admin call goes on either way.
    await this.running.get(queue)?.catch(() => undefined);
    this.limitsWritten.add(queue);
  }

  private start(ctx: ScriptContext): Promise<void> {
    const queue = ctx.keys.queue;
    const registering = this.registerNow(ctx).finally(() => {
      if (this.running.get(queue) === registering) this.running.delete(queue);
    });
    this.running.set(queue, registering);
    return registering;
  }

  private async registerNow(ctx: ScriptContext): Promise<void> {
    const queue = ctx.keys.queue;
    const generation = this.generation(queue);
    await this.connections.serverVerified();
    let refusal: unknown;
    /** Runs one write of the registration: false when a full Redis refused it (nothing written). */
    const unlessFull = async (write: () => Promise<unknown>): Promise<boolean> => {
      try {
        await write();
        return true;
      } catch (error) {
        if (!isOutOfMemoryReply(error)) throw error;
        refusal ??= error;
        return false;
      }
    };
    // Full: the format is read instead (a newer one still stops this process), recorded later.
    if (!(await unlessFull(() => ensureDataFormat(ctx)))) await checkDataFormat(ctx);
    let waitingLimits: Partial<FlowLimits> = {};
    if (!this.limitsWritten.has(queue)) {
      const limits = this.limitsOf(queue);
      if (!(await unlessFull(() => writeConfiguredLimits(ctx, limits, this.logger)))) waitingLimits = limits;
      else if (this.generation(queue) === generation) this.limitsWritten.add(queue);
    }
    await unlessFull(() => this.reregister([queue]));
    // forget() meanwhile: the configuration changed, and its next use registers it afresh.
    if (this.generation(queue) !== generation) return;
    if (refusal === undefined) {
      this.registered.set(queue, monotonicMs());
      this.owed.delete(queue);
      this.notices.get(queue)?.cleared();
      return;
    }
    this.owe(ctx, refusal, waitingLimits);
  }

  /** A full Redis refused part of the registration: the background retry finishes it. */
  private owe(ctx: ScriptContext, refusal: unknown, limits: Partial<FlowLimits>): void {
    const queue = ctx.keys.queue;
    this.owed.set(queue, ctx);
    this.scheduleRetry();
    const configured = FLOW_LIMIT_KEYS.filter((key) => limits[key] !== undefined);
    if (configured.length === 0) {
      this.logger.debug(`Redis is full: queue ${queue} is registered once there is room`);
      return;
    }
    let notice = this.notices.get(queue);
    if (!notice) {
      notice = new FullRedisNotice(this.logger, `The registration of queue ${queue}`);
      this.notices.set(queue, notice);
    }
    const described = configured.map((key) => `${key} ${describeLimit(limits[key])}`).join(', ');
    notice.met(
      refusal,
      `The limits this process configures for the queue (${described}) are written once there is ` +
        `room (tried every ${REGISTER_AGAIN_WHEN_FULL_MS / 1_000} s); until then its jobs are claimed ` +
        'under the limits stored in Redis',
    );
  }

  private scheduleRetry(): void {
    if (this.retryTimer !== undefined || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.retryOwed();
    }, REGISTER_AGAIN_WHEN_FULL_MS);
    this.retryTimer.unref();
  }

  /** One pass over the owed registrations; a refused one owes itself again (owe). */
  private async retryOwed(): Promise<void> {
    for (const [queue, ctx] of [...this.owed]) {
      if (this.closed) return;
      try {
        await (this.running.get(queue) ?? this.start(ctx));
      } catch (error) {
        // Unreachable meanwhile: the next pass tries again. Anything else (a newer data format
        // recorded meanwhile) is no full Redis: the queue's next use registers it and says why.
        if (isTransientRedisError(error)) continue;
        this.owed.delete(queue);
        this.logger.error(`Queue ${queue} could not be registered: ${(error as Error).message}`);
      }
    }
    if (this.owed.size > 0) this.scheduleRetry();
  }

  private generation(queue: string): number {
    return this.generations.get(queue) ?? 0;
  }

  /**
   * Writes queue names to the registry again, whatever this process remembers (one command).
   * @throws RedisOutOfMemoryError when Redis is full (nothing was written).
   */
  async reregister(queues: readonly string[]): Promise<void> {
    if (queues.length === 0) return;
    for (const queue of queues) queueKeys(queue, this.keyPrefix);
    const client = this.connections.client;
    try {
      await client.sadd(queueRegistryKey(this.keyPrefix), ...queues);
    } catch (error) {
      throw typedOutOfMemory(error, client, 'SADD (the queue registry)');
    }
  }
}
