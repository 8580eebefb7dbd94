import type { EchoMqConnection, EchoMqModuleOptions } from '@app/echomq';

/** What a worker child serves and where it writes its ledger (passed as JSON in EMQ_CHAOS). */
export interface WorkerChildConfig {
  readonly connection: EchoMqConnection;
  readonly queue: string;
  /** The folder of ledger files; the child writes worker-<pid>.ledger there. */
  readonly ledgerDir: string;
  readonly concurrency: number;
  readonly leaseMs: number;
  readonly maxAttempts: number;
  /**
   * How long completed rows are kept: default an hour, so the verdict can tell a completion whose
   * ledger line died with its SIGKILLed worker. 0 deletes them (a full Redis must free room).
   */
  readonly retainCompletedMs?: number;
  /** Any other module options (commandTimeoutMs, reaper, eventsMaxLen, ...), passed to forRoot as given. */
  readonly module?: Partial<Omit<EchoMqModuleOptions, 'connection' | 'queues'>>;
}

/** What a producer child enqueues (passed as JSON in EMQ_CHAOS). */
export interface ProducerChildConfig {
  readonly connection: EchoMqConnection;
  readonly queue: string;
  readonly ledgerDir: string;
  /** Jobs to enqueue in all. */
  readonly count: number;
  /** Enqueue calls in flight at once (single enqueues, merged by the library). */
  readonly inFlight: number;
  /** At most this many enqueues a second over the whole run; 0 for as fast as possible. */
  readonly perSecond: number;
  /** The job: its name and data (a 'work' job sleeps data.ms; a 'poison' job kills its worker). */
  readonly job: { readonly name: 'work' | 'poison'; readonly data: Record<string, unknown> };
  /**
   * Each logical job's idempotency key is `<keyPrefix>-<seq>`, so an enqueue repeated after an
   * error can never make a second job. Unique per producer.
   */
  readonly idempotencyPrefix: string;
  /** A failed enqueue is tried again after this long, with the same idempotency key, until it is acknowledged. */
  readonly retryDelayMs: number;
  readonly module?: Partial<Omit<EchoMqModuleOptions, 'connection' | 'queues'>>;
}

/** Messages a child sends its orchestrator over IPC. */
export type ChildMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'progress'; readonly acked: number; readonly failed: number }
  | { readonly type: 'finished'; readonly acked: number; readonly failed: number };

export function readChildConfig<T>(): T {
  const text = process.env.EMQ_CHAOS;
  if (!text) throw new Error('EMQ_CHAOS is not set: this entry is started by the chaos orchestrator');
  return JSON.parse(text) as T;
}
