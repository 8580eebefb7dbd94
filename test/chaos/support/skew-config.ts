import { join } from 'node:path';
import type { ProducerChildConfig } from './child-config';

/**
 * What a producer of the clock-skew scenario does, in order, after its warm-up: upserts its
 * schedule (if any), enqueues `count` short 'work' jobs one at a time at `perSecond` (the FIFO
 * sample), then its long, fail-once and delayed jobs. The inherited `job`, `inFlight` and
 * `idempotencyPrefix` describe the FIFO sample.
 */
export interface SkewProducerConfig extends ProducerChildConfig {
  /**
   * Waited after boot before the first enqueue. A leased node's first ids carry its tenure's
   * floor, up to 1.8 s ahead of the clock (docs/model.md, "Why ids are unique"); after the wait
   * every id carries the time it was minted at, so FIFO order can be read off the ids.
   */
  readonly warmupMs: number;
  /** 'work' jobs longer than the lease: only heartbeats keep them. */
  readonly long: { readonly count: number; readonly ms: number };
  /** 'fail-once' jobs, each with its own fixed backoff. */
  readonly failOnce: { readonly count: number; readonly backoffMs: number };
  /** 'work' jobs enqueued with delayMs. */
  readonly delayed: { readonly count: number; readonly delayMs: number };
  /** A schedule upserted before the FIFO sample; its occurrences are jobs named 'tick'. */
  readonly schedule?: { readonly key: string; readonly everyMs: number };
}

/** What a skew producer did, written to skew-producer-<pid>.json when it finishes. */
export interface SkewProducerReport {
  readonly pid: number;
  readonly fifo: string[];
  readonly long: string[];
  readonly failOnce: string[];
  readonly delayed: string[];
  readonly schedule?: {
    readonly key: string;
    /** This process's clock (skewed) when the upsert returned. */
    readonly upsertedAt: number;
    /** The upsert's answer: the first occurrence's run-at. */
    readonly nextRunAt: number;
  };
}

export function skewReportPath(ledgerDir: string, pid: number): string {
  return join(ledgerDir, `skew-producer-${pid}.json`);
}
