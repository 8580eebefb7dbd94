import type { RedisConnections } from '../connection/redis-connections';
import { queueKeys, queueRegistryKey } from '../keyspace';
import type { ScriptContext } from '../scripts';
import { ensureDataFormat } from './data-format';

/**
 * How often a process writes a queue it uses into the registry again: the reaper drops
 * queues that went idle, and a long-lived producer must bring its queue back.
 */
const REREGISTER_EVERY_MS = 60_000;

/**
 * Readies queues for this process, once and then once a minute while in use: the server is
 * a Redis new enough, the queue's data format is one this code knows (recorded on first
 * use), and the queue is in the registry that reapers and tools read (docs/upgrading.md).
 */
export class QueueRegistration {
  /** When this process last registered each queue (local clock, ms). */
  private readonly registered = new Map<string, number>();

  constructor(
    private readonly connections: RedisConnections,
    private readonly keyPrefix: string,
  ) {}

  needed(queue: string): boolean {
    const at = this.registered.get(queue);
    return at === undefined || Date.now() - at > REREGISTER_EVERY_MS;
  }

  /** @throws RedisVersionError or DataFormatError, having written nothing. */
  async register(ctx: ScriptContext): Promise<void> {
    const queue = ctx.keys.queue;
    if (!this.needed(queue)) return;
    await this.connections.redisVersion.verified();
    await ensureDataFormat(ctx);
    await this.reregister([queue]);
    this.registered.set(queue, Date.now());
  }

  /** Writes queue names to the registry again, whatever this process remembers (one command). */
  async reregister(queues: readonly string[]): Promise<void> {
    if (queues.length === 0) return;
    for (const queue of queues) queueKeys(queue, this.keyPrefix);
    await this.connections.client.sadd(queueRegistryKey(this.keyPrefix), ...queues);
  }
}
