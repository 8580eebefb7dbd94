import type { ClusterNode, ClusterOptions, RedisOptions } from 'ioredis';
import type { QueueOptions } from '../queue/queue-options';

/** A single Redis (by URL and/or ioredis options) or a Redis Cluster (by its seed nodes). */
export type EchoMqConnection =
  | (RedisOptions & { readonly url?: string })
  | { readonly cluster: { readonly nodes: ClusterNode[]; readonly options?: ClusterOptions } };

export interface ReaperOptions {
  /** How often each process reaps expired leases and promotes due jobs. Default 1000 ms (jittered ±20%). */
  readonly intervalMs?: number;
  /** Most jobs moved per script call; a tick keeps calling while more remain, up to 10 calls. Default 500. */
  readonly batch?: number;
}

export interface EchoMqModuleOptions {
  readonly connection: EchoMqConnection;
  /**
   * Snowflake node number (0-1023) for ids minted by this process. It must differ
   * between live processes; when absent, one is leased from Redis.
   */
  readonly nodeId?: number;
  /** Settings for every queue; per-queue entries and @Processor options override them. */
  readonly defaults?: QueueOptions;
  readonly queues?: Readonly<Record<string, QueueOptions>>;
  /** Approximate length each queue's event stream is capped at. Default 10000. */
  readonly eventsMaxLen?: number;
  /** Largest serialised payload accepted by enqueue. Default 512 KiB. */
  readonly maxPayloadBytes?: number;
  /** How long an idempotency key keeps returning its job's id. Default 24 h. */
  readonly idempotencyTtlMs?: number;
  /** Grace period for in-flight jobs at shutdown before they are released. Default 10 s. */
  readonly shutdownGraceMs?: number;
  readonly reaper?: ReaperOptions;
}

export interface ResolvedModuleSettings {
  readonly eventsMaxLen: number;
  readonly maxPayloadBytes: number;
  readonly idempotencyTtlMs: number;
  readonly shutdownGraceMs: number;
  readonly reaperIntervalMs: number;
  readonly reaperBatch: number;
}

export function resolveModuleSettings(options: EchoMqModuleOptions): ResolvedModuleSettings {
  return {
    eventsMaxLen: options.eventsMaxLen ?? 10_000,
    maxPayloadBytes: options.maxPayloadBytes ?? 512 * 1024,
    idempotencyTtlMs: options.idempotencyTtlMs ?? 24 * 3_600_000,
    shutdownGraceMs: options.shutdownGraceMs ?? 10_000,
    reaperIntervalMs: options.reaper?.intervalMs ?? 1_000,
    reaperBatch: options.reaper?.batch ?? 500,
  };
}
