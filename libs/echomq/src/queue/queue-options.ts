/** How a failed job waits before its next attempt. */
export type BackoffPolicy =
  | { readonly type: 'fixed'; readonly delayMs: number }
  | {
      readonly type: 'exponential';
      readonly delayMs: number;
      /** Upper bound on one delay; default one hour. */
      readonly maxDelayMs?: number;
      /** 0..1: the share of each delay drawn at random (full jitter is 1); default 0.5. */
      readonly jitter?: number;
    }
  | { readonly type: 'custom'; readonly delay: (attempt: number, error: unknown) => number };

/** Per-queue settings: given as defaults to forRoot, per queue in forRoot, or on @Processor. */
export interface QueueOptions {
  /** Attempts per retry budget before a job goes to dead. Default 3. */
  readonly maxAttempts?: number;
  readonly backoff?: BackoffPolicy;
  /** How long one claim holds a job before the reaper may take it back. Default 30 s. */
  readonly leaseMs?: number;
  /** Jobs one worker process runs at once for this queue. Default 10. */
  readonly concurrency?: number;
  /** Keep a completed job's row (with its result) this long; 0 deletes it at once. Default 0. */
  readonly retainCompletedMs?: number;
}

export type ResolvedQueueOptions = Required<QueueOptions>;

export const QUEUE_DEFAULTS: ResolvedQueueOptions = {
  maxAttempts: 3,
  backoff: { type: 'exponential', delayMs: 1_000, maxDelayMs: 3_600_000, jitter: 0.5 },
  leaseMs: 30_000,
  concurrency: 10,
  retainCompletedMs: 0,
};

/** Later layers win: built-in defaults < module defaults < per-queue configuration < decorator. */
export function resolveQueueOptions(...layers: (QueueOptions | undefined)[]): ResolvedQueueOptions {
  const merged: Record<string, unknown> = { ...QUEUE_DEFAULTS };
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer ?? {})) {
      if (value !== undefined) merged[key] = value;
    }
  }
  return merged as unknown as ResolvedQueueOptions;
}
