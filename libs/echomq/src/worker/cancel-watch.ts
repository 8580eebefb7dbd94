import { Logger } from '@nestjs/common';
import { Cluster } from 'ioredis';
import type { QueueKeys } from '../keyspace';
import type { RedisConnections } from '../connection/redis-connections';
import { CancelReader, type CancelListener } from './cancel-reader';

export type { CancelListener } from './cancel-reader';

/** One claim loop's interest in its queue's cancels. */
export interface CancelSubscription {
  /**
   * Resolves once the stream's position was taken (or its first try failed: the reader keeps
   * trying, and a removal it misses meanwhile is still caught by the next heartbeat). A claim
   * loop claims only after this, so every removal of a job it claims is read.
   */
  readonly ready: Promise<void>;
  stop(): void;
}

/**
 * Prompt cancellation: removing an active job puts its claim (id, attempt) on the queue's
 * cancels stream (remove.lua), and this follows the cancels streams of the queues this
 * process serves with blocked reads, so the handler running that claim here is aborted
 * within a round trip instead of at its next heartbeat. A blocked XREAD costs nothing while
 * no job is removed, and the claim path does no work for it.
 *
 * On a standalone Redis one connection reads every served queue's stream in one XREAD; on a
 * Cluster, keys of different slots cannot share one, so each queue gets its own reader.
 */
export class CancelWatch {
  private readonly readers = new Map<string, CancelReader>();

  constructor(
    private readonly connections: RedisConnections,
    private readonly logger: Logger = new Logger('EchoMQ'),
  ) {}

  /** Calls `listener` with the claim of each job of this queue removed while active, from now on. */
  watch(keys: QueueKeys, listener: CancelListener): CancelSubscription {
    const group = this.connections.client instanceof Cluster ? keys.cancels : '';
    let reader = this.readers.get(group);
    if (!reader) {
      reader = new CancelReader(this.connections, this.logger);
      this.readers.set(group, reader);
    }
    const ready = reader.add(keys.cancels, listener);
    let stopped = false;
    return {
      ready,
      stop: () => {
        if (stopped) return;
        stopped = true;
        if (reader.remove(keys.cancels, listener)) return;
        // Its last stream is gone: the reader closed its connection.
        if (this.readers.get(group) === reader) this.readers.delete(group);
      },
    };
  }

  /** Readers running now (one on a standalone Redis, one per watched queue on a Cluster). */
  get readerCount(): number {
    return this.readers.size;
  }

  /** Stops every reader and closes its connection. */
  close(): void {
    for (const reader of this.readers.values()) reader.close();
    this.readers.clear();
  }
}
