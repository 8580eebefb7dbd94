import type { Logger } from '@nestjs/common';
import { isTransientRedisError } from '../errors';
import { onceReachable } from '../connection/once-reachable';
import type { RedisConnections } from '../connection/redis-connections';
import type { QueueService } from '../queue/queue.service';
import type { Serving } from './loop-report';

/**
 * The registration of the queues an application serves: each is registered (its data format
 * checked) at bootstrap, before its loop starts. A queue Redis was unreachable for then is
 * `registering`: registered in the background until Redis answers, and its loop started after.
 * One Redis says this worker must not serve (a newer data format) is `refused`, with why.
 * Both show in health (see reportLoop).
 */
export class ServedQueues {
  private readonly registering = new Set<string>();
  private readonly refused = new Map<string, string>();
  /** Ends the background registrations (and the schedules' upserts) at shutdown. */
  private readonly abort = new AbortController();

  constructor(
    private readonly queues: QueueService,
    private readonly connections: RedisConnections,
    private readonly logger: Logger,
  ) {}

  /** Aborted at shutdown: bootstrap work that waits for Redis gives up. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  serving(queue: string): Serving {
    return { refused: this.refused.get(queue), registering: this.registering.has(queue) };
  }

  /** A queue started by hand (startQueue) is served whatever Redis said of it before. */
  forget(queue: string): void {
    this.refused.delete(queue);
  }

  /** Registers the served queues; returns those Redis was unreachable for (see startOnceRegistered). */
  async registerAll(served: Iterable<string>): Promise<string[]> {
    const unregistered: string[] = [];
    try {
      for (const queue of served) {
        try {
          await this.queues.register(queue);
        } catch (error) {
          // Redis down at boot: the application still boots, and the queue is registered
          // (its data format checked) in the background before its loop starts.
          if (!isTransientRedisError(error)) throw error;
          unregistered.push(queue);
        }
      }
    } catch (error) {
      // A queue this worker must not serve (DataFormatError, RedisVersionError,
      // EvictionPolicyError) stops the boot before any loop starts; Nest runs no shutdown
      // hooks then, so close the connections here.
      await this.connections.onApplicationShutdown();
      throw error;
    }
    return unregistered;
  }

  /**
   * Registers a queue whose registration failed at boot because Redis was unreachable,
   * repeating until Redis answers, then calls `start`. A queue Redis says this worker must
   * not serve (a newer data format) is left unserved, said once as an error.
   */
  startOnceRegistered(queue: string, start: () => void): void {
    this.registering.add(queue);
    void this.register(queue, start);
  }

  private async register(queue: string, start: () => void): Promise<void> {
    try {
      const registered = await onceReachable(() => this.queues.register(queue), this.abort.signal);
      this.registering.delete(queue);
      if (registered) start();
    } catch (error) {
      this.registering.delete(queue);
      this.refused.set(queue, (error as Error).message);
      this.logger.error(`Not serving queue ${queue}: ${(error as Error).message}`);
    }
  }

  /** At shutdown: the background registrations end, and nothing is registering or refused any more. */
  close(): void {
    this.abort.abort();
    this.registering.clear();
    this.refused.clear();
  }
}
