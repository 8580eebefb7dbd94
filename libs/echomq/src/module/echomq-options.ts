import type { ClusterNode, ClusterOptions, RedisOptions } from 'ioredis';
import type { QueueOptions } from '../queue/queue-options';
import type { DeclaredSchedule } from '../schedules/schedule-types';
import { validateModuleOptions } from './validate-options';

/**
 * A single Redis (by URL and/or ioredis options), a master found through Redis Sentinel
 * (`sentinels` and the master's `name`, as ioredis takes them), or a Redis Cluster (by its
 * seed nodes). It must name a server: a `url` that is given must be a non-empty string (an
 * unset environment variable is refused, not read as localhost:6379), and without a url one
 * of host, port, path or sentinels is needed; a cluster needs at least one seed node.
 */
export type EchoMqConnection =
  | (RedisOptions & { readonly url?: string })
  | { readonly cluster: { readonly nodes: ClusterNode[]; readonly options?: ClusterOptions } };

/** Durable writes: wait for replicas to acknowledge (Redis WAIT) before a write counts as done. */
export interface DurableOptions {
  /** Replicas that must acknowledge each write: 1 to 16. */
  readonly replicas: number;
  /** How long to wait for them: 10 to 60,000 ms. Default 1,000 ms. */
  readonly timeoutMs?: number;
}

export interface ReaperOptions {
  /**
   * The longest each process goes without looking at a queue for expired leases, due jobs and
   * schedules left behind: 50 to 60,000 ms. Default 30,000 ms. Between those looks the reaper
   * sleeps until the queue's earliest lease deadline or scheduled run, and a queue whose lease
   * is shorter is looked at once per lease. Each process starts at a random phase.
   */
  readonly intervalMs?: number;
  /** Most jobs moved per script call, 1 to 500 (SCRIPT_BATCH_MAX); a look keeps calling while more remain, up to 10 calls. Default 500. */
  readonly batch?: number;
}

/** Every option is checked at boot against its range (docs/options.md); unknown keys are refused. */
export interface EchoMqModuleOptions {
  /** Required. Where Redis is (see EchoMqConnection). */
  readonly connection: EchoMqConnection;
  /**
   * Snowflake node number (an integer from 0 to 1023) for ids minted by this process.
   * It must differ between live processes; when absent, one is leased from Redis.
   */
  readonly nodeId?: number;
  /**
   * The first segment of every key EchoMQ writes (`<keyPrefix>:{queue}:pending`, `<keyPrefix>:queues`):
   * 1 to 32 characters from A-Z a-z 0-9 . _ -. Applications with different prefixes share one
   * Redis without seeing each other's queues, and an ACL can scope one to `~<keyPrefix>:*`.
   * Default 'emq'.
   */
  readonly keyPrefix?: string;
  /** Settings for every queue; per-queue entries and @Processor options override them. */
  readonly defaults?: QueueOptions;
  /** Settings per queue name; each name must be a valid queue name. */
  readonly queues?: Readonly<Record<string, QueueOptions>>;
  /** Approximate length each queue's event stream is capped at: 100 to 1,000,000. Default 10,000. */
  readonly eventsMaxLen?: number;
  /** Largest serialised payload accepted by enqueue: 1 byte to 16 MiB (PAYLOAD_MAX_BYTES). Default 512 KiB. */
  readonly maxPayloadBytes?: number;
  /** How long an idempotency key keeps returning its job's id: 1,000 ms to 30 days. Default 24 h. */
  readonly idempotencyTtlMs?: number;
  /** Grace period for in-flight jobs at shutdown before they are released: 0 to 600,000 ms (10 min). Default 10 s. */
  readonly shutdownGraceMs?: number;
  /**
   * The deadline of every Redis command: 100 to 120,000 ms. A command without a reply by
   * then fails with OutcomeUnknownError and its connection is replaced. Default 5,000 ms.
   */
  readonly commandTimeoutMs?: number;
  /**
   * How long a script remembers a call's reply, so that a repeat of the call (a resend
   * after a lost reply, a retry) returns it: 5,000 to 3,600,000 ms, and at least twice
   * commandTimeoutMs, so any repeat arrives while the reply is remembered. Default 60,000 ms.
   */
  readonly replayWindowMs?: number;
  readonly reaper?: ReaperOptions;
  /**
   * Whether the claim loops and the reaper start at application bootstrap: true or false.
   * Default true. With false (for tests), processors are still discovered and checked at boot
   * but claim nothing until asked: the testing kit's runUntilIdle, or ProcessorExplorer.startQueue.
   */
  readonly startProcessors?: boolean;
  /**
   * Schedules upserted at every application bootstrap, producer-only applications included
   * (docs/schedules.md): `{ queue, key, cron, tz? | everyMs, missed?, missedAfterMs?, template? }`.
   * Each is checked at boot like upsertSchedule's arguments; a key is declared once per queue.
   */
  readonly schedules?: readonly DeclaredSchedule[];
  /**
   * Refuse to serve or enqueue on a Redis whose `maxmemory-policy` is not `noeviction`
   * (EvictionPolicyError), instead of only logging an error: true or false. Default false.
   * Where CONFIG is denied the policy cannot be read, and the process carries on.
   */
  readonly requireNoEviction?: boolean;
  /**
   * Durable writes (docs/reliability.md): an enqueue resolves only once `replicas` replicas
   * acknowledged it (else NotReplicatedError), and a claimed job starts only once its claim
   * is replicated, so a failover can neither lose an acknowledged enqueue nor hand one
   * fencing token to two holders. On a cluster each confirmation waits for the replicas of
   * the master that holds the write, so every master with queues needs `replicas` of them.
   */
  readonly durable?: DurableOptions;
  /**
   * OpenTelemetry spans (docs/tracing.md): a PRODUCER span per enqueue, a span per claim, a
   * CONSUMER span around each handler and a span per settlement, with the producer's trace
   * context carried on the job (row field 'tc') so the job's spans join the producer's trace.
   * true or false. Default false: no spans, nothing more on a row. Needs @opentelemetry/api
   * (^1.3.0) installed; spans are recorded once the application registers an OpenTelemetry SDK.
   */
  readonly tracing?: boolean;
}

export interface ResolvedModuleSettings {
  readonly keyPrefix: string;
  readonly eventsMaxLen: number;
  readonly maxPayloadBytes: number;
  readonly idempotencyTtlMs: number;
  readonly shutdownGraceMs: number;
  readonly commandTimeoutMs: number;
  readonly replayWindowMs: number;
  readonly reaperIntervalMs: number;
  readonly reaperBatch: number;
  readonly tracing: boolean;
}

export { MODULE_DEFAULTS, MODULE_OPTION_RANGES } from './validate-options';

/**
 * Validates every option (InvalidOptionError naming the first one out of range) and
 * fills in the defaults. Called when QueueService is built, so a bad configuration
 * stops the boot, producer-only applications included.
 */
export function resolveModuleSettings(options: EchoMqModuleOptions): ResolvedModuleSettings {
  return validateModuleOptions(options);
}
