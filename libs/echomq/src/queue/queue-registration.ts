import { Logger } from '@nestjs/common';
import type { RedisConnections } from '../connection/redis-connections';
import { queueKeys, queueRegistryKey } from '../keyspace';
import type { ScriptContext } from '../scripts';
import { isOutOfMemoryReply, typedOutOfMemory } from '../scripts/reply-errors';
import type { FlowLimits } from '../scripts/set-limits';
import { writeConfiguredLimits } from './boot-limits';
import { checkDataFormat, ensureDataFormat } from './data-format';

/**
 * How often a process writes a queue it uses into the registry again: the reaper drops
 * queues that went idle, and a long-lived producer must bring its queue back.
 */
const REREGISTER_EVERY_MS = 60_000;

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
 * then used all the same, its format read instead of recorded, and what could not be written
 * is written at its next use: a worker that boots while Redis is full serves its queues (which
 * frees room), and an enqueue meets the refusal in its own script (RedisOutOfMemoryError).
 */
export class QueueRegistration {
  /** When this process last registered each queue (local clock, ms). */
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
  private readonly logger = new Logger('EchoMQ');

  constructor(
    private readonly connections: RedisConnections,
    private readonly keyPrefix: string,
    /** The shared limits this process's configuration gives a queue (configuredLimits). */
    private readonly limitsOf: (queue: string) => Partial<FlowLimits>,
  ) {}

  /**
   * Makes the next register() of a queue a full one, its limits written again: its
   * configuration changed (a @Processor's options were recorded after a producer used it).
   */
  forget(queue: string): void {
    this.registered.delete(queue);
    this.limitsWritten.delete(queue);
    this.running.delete(queue);
    this.generations.set(queue, this.generation(queue) + 1);
  }

  needed(queue: string): boolean {
    const at = this.registered.get(queue);
    return at === undefined || Date.now() - at > REREGISTER_EVERY_MS;
  }

  /** @throws RedisVersionError, EvictionPolicyError or DataFormatError, having written nothing. */
  async register(ctx: ScriptContext): Promise<void> {
    const queue = ctx.keys.queue;
    const running = this.running.get(queue);
    if (running) return running;
    if (!this.needed(queue)) return;
    const registering = this.registerNow(ctx).finally(() => {
      if (this.running.get(queue) === registering) this.running.delete(queue);
    });
    this.running.set(queue, registering);
    return registering;
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

  private async registerNow(ctx: ScriptContext): Promise<void> {
    const queue = ctx.keys.queue;
    const generation = this.generation(queue);
    await this.connections.serverVerified();
    let written = await this.unlessFull(queue, () => ensureDataFormat(ctx));
    // Full: the format is read instead (a newer one still stops this process), recorded next time.
    if (!written) await checkDataFormat(ctx);
    if (!this.limitsWritten.has(queue)) {
      const limits = await this.unlessFull(queue, () =>
        writeConfiguredLimits(ctx, this.limitsOf(queue), this.logger),
      );
      if (!limits) written = false;
      else if (this.generation(queue) === generation) this.limitsWritten.add(queue);
    }
    if (!(await this.unlessFull(queue, () => this.reregister([queue])))) written = false;
    if (written && this.generation(queue) === generation) this.registered.set(queue, Date.now());
  }

  /** Runs one write of a registration: false when a full Redis refused it (nothing was written). */
  private async unlessFull(queue: string, write: () => Promise<unknown>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (error) {
      if (!isOutOfMemoryReply(error)) throw error;
      this.logger.debug(`Redis is full: queue ${queue} is registered at its next use`);
      return false;
    }
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
