import { describeValue } from '../errors';
import {
  checkFields,
  checkInteger,
  checkKnownKeys,
  checkNumber,
  checkRecord,
  optionPath,
  refuse,
  type OptionCheck,
} from '../option-checks';
import { DEAD_RETENTION_DEFAULTS, DEAD_RETENTION_RANGES } from '../scripts/dead-retention';
import type { RateLimit } from '../scripts/set-limits';
import { FLOW_LIMIT_CHECKS, type FlowLimitKey } from './flow-limits';
import { MAX_PARTITIONS } from '../keyspace/partition-name';
import { checkLimitsSplit } from './partitions/partition-options';

const SECOND_MS = 1_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The longest wait one backoff may ask for (delayMs and maxDelayMs). */
const BACKOFF_MAX_MS = 7 * DAY_MS;

/** The cap on one exponential delay when the policy gives no maxDelayMs (backoffDelay uses the same). */
export const DEFAULT_MAX_DELAY_MS = HOUR_MS;

/** How a failed job waits before its next attempt. */
export type BackoffPolicy =
  | {
      readonly type: 'fixed';
      /** The wait before every retry: an integer from 0 to 604,800,000 ms (7 days). */
      readonly delayMs: number;
    }
  | {
      readonly type: 'exponential';
      /** The first wait, doubled on each failure: an integer from 0 to 604,800,000 ms (7 days). */
      readonly delayMs: number;
      /** Upper bound on one delay: an integer from delayMs to 604,800,000 ms; default one hour (then delayMs may be at most one hour). */
      readonly maxDelayMs?: number;
      /** 0..1: the share of each delay drawn at random (full jitter is 1); default 0.5. */
      readonly jitter?: number;
    }
  | {
      readonly type: 'custom';
      /** The wait in ms after `attempt` failures; must be a function. */
      readonly delay: (attempt: number, error: unknown) => number;
    };

/**
 * Per-queue settings: given as defaults to forRoot, per queue in forRoot, or on
 * @Processor. Each is checked at boot against its range (docs/options.md).
 */
export interface QueueOptions {
  /** Attempts per retry budget before a job goes to dead: an integer from 1 to 1,000,000. Default 3. */
  readonly maxAttempts?: number;
  /** How a failed job waits before its next attempt. Default exponential from 1 s, capped at 1 h, jitter 0.5. */
  readonly backoff?: BackoffPolicy;
  /** How long one claim holds a job before the reaper may take it back: 1,000 ms to 24 h. Default 30 s. */
  readonly leaseMs?: number;
  /** Jobs one worker process runs at once for this queue: an integer from 1 to 10,000. Default 10. */
  readonly concurrency?: number;
  /** Keep a completed job's row (with its result) this long; 0 deletes it at once; at most 365 days. Default 0. */
  readonly retainCompletedMs?: number;
  /**
   * Most jobs the dead set keeps: an integer from 0 to 10,000,000. Each move into dead trims the
   * oldest (mint order) past it, in the same call. Applied by the process that moves the job
   * (the failing worker, the reaper). Default 10,000.
   */
  readonly deadMaxJobs?: number;
  /**
   * Most age since enqueue (the id's time) of a job in dead: 1,000 ms to 3,650 days; older ones
   * are trimmed when a job goes in. Default null: no age limit.
   */
  readonly deadMaxAgeMs?: number | null;
  /**
   * How long one attempt may run in this worker: 1 to 604,800,000 ms (7 days). At the deadline the
   * handler's signal aborts with JobTimeoutError and the attempt fails with it (retried per backoff).
   * A job's own enqueue timeoutMs wins. Default null: no timeout (null also clears a lower layer's).
   */
  readonly timeoutMs?: number | null;
  /**
   * Shared, kept in Redis: at most `max` claims of the queue in any `windowMs`-long span, all workers
   * together (max 1 to 1,000,000; windowMs 1 to 86,400,000). null clears it; absent leaves Redis as it is.
   */
  readonly rateLimit?: RateLimit | null;
  /** Shared, kept in Redis: at most this many jobs of the queue active at once, all workers together (1 to 1,000,000). */
  readonly globalConcurrency?: number | null;
  /** Shared, kept in Redis: at most this many active jobs per lane, all workers together (1 to 1,000,000). */
  readonly laneConcurrency?: number | null;
  /** Shared, kept in Redis: each lane at most `max` claims in any `windowMs`-long span (ranges of rateLimit). */
  readonly laneRateLimit?: RateLimit | null;
  /**
   * Spread the queue over this many physical queues `name#0 … name#N-1`, each on its own cluster
   * slot: an integer from 1 to 16. Recorded in Redis on first use, so producers that do not
   * declare it (an api, the CLI) spread the same way. Default: as recorded, else 1 (docs/partitions.md).
   */
  readonly partitions?: number;
}

/**
 * What a worker runs a queue with: every per-worker option filled in, and the shared limits
 * only when some layer configures them (they have no default: absent means "not configured
 * here", and the limits in Redis apply; see configuredLimits).
 */
export type ResolvedQueueOptions = Required<Omit<QueueOptions, FlowLimitKey | 'partitions'>> &
  Pick<QueueOptions, FlowLimitKey | 'partitions'>;

export const QUEUE_DEFAULTS: ResolvedQueueOptions = {
  maxAttempts: 3,
  backoff: { type: 'exponential', delayMs: 1_000, maxDelayMs: DEFAULT_MAX_DELAY_MS, jitter: 0.5 },
  leaseMs: 30_000,
  concurrency: 10,
  retainCompletedMs: 0,
  timeoutMs: null,
  deadMaxJobs: DEAD_RETENTION_DEFAULTS.deadMaxJobs,
  deadMaxAgeMs: DEAD_RETENTION_DEFAULTS.deadMaxAgeMs,
};

/** The documented range of each numeric queue option (docs/options.md). */
export const QUEUE_OPTION_RANGES = {
  maxAttempts: { min: 1, max: 1_000_000 },
  leaseMs: { min: SECOND_MS, max: DAY_MS },
  concurrency: { min: 1, max: 10_000 },
  retainCompletedMs: { min: 0, max: 365 * DAY_MS },
  backoffDelayMs: { min: 0, max: BACKOFF_MAX_MS },
  backoffJitter: { min: 0, max: 1 },
  // A timeout longer than a week is no timeout; the lease keeps a stuck job visible meanwhile.
  timeoutMs: { min: 1, max: 7 * DAY_MS },
  deadMaxJobs: DEAD_RETENTION_RANGES.deadMaxJobs,
  deadMaxAgeMs: DEAD_RETENTION_RANGES.deadMaxAgeMs,
  partitions: { min: 1, max: MAX_PARTITIONS },
} as const;

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

const QUEUE_OPTION_CHECKS: { readonly [K in keyof QueueOptions]-?: OptionCheck } = {
  maxAttempts: (value, option) => checkInteger(value, option, QUEUE_OPTION_RANGES.maxAttempts),
  backoff: (value, option) => assertBackoff(value, option),
  leaseMs: (value, option) => checkInteger(value, option, QUEUE_OPTION_RANGES.leaseMs),
  concurrency: (value, option) => checkInteger(value, option, QUEUE_OPTION_RANGES.concurrency),
  retainCompletedMs: (value, option) => checkInteger(value, option, QUEUE_OPTION_RANGES.retainCompletedMs),
  // null is the resolved default (no timeout), so the merged options pass the same checks.
  timeoutMs: (value, option) => {
    if (value !== null) checkInteger(value, option, QUEUE_OPTION_RANGES.timeoutMs);
  },
  deadMaxJobs: (value, option) => checkInteger(value, option, QUEUE_OPTION_RANGES.deadMaxJobs),
  // null is the resolved default (no age limit), as for timeoutMs.
  deadMaxAgeMs: (value, option) => {
    if (value !== null) checkInteger(value, option, QUEUE_OPTION_RANGES.deadMaxAgeMs);
  },
  partitions: (value, option) => checkInteger(value, option, QUEUE_OPTION_RANGES.partitions),
  ...FLOW_LIMIT_CHECKS,
};

/**
 * Checks one layer of queue options (or the merged result) against the documented
 * ranges; `path` names the layer in errors ('defaults', 'queues.emails', or '' for
 * bare option names). Throws InvalidOptionError; returns the options unchanged.
 */
export function assertQueueOptions(options: unknown, path: string): QueueOptions {
  checkFields(checkRecord(options, path || 'options'), QUEUE_OPTION_CHECKS, path);
  const checked = options as QueueOptions;
  if (checked.partitions !== undefined) {
    checkLimitsSplit(checked, checked.partitions, optionPath(path, 'partitions'), (key) =>
      optionPath(path, key),
    );
  }
  return checked;
}

/** Checks a backoff policy; `option` names it in errors (e.g. 'queues.emails.backoff'). */
export function assertBackoff(value: unknown, option: string): BackoffPolicy {
  const policy = checkRecord(value, option);
  const at = (key: string): string => optionPath(option, key);
  switch (policy.type) {
    case 'fixed':
      checkKnownKeys(policy, ['type', 'delayMs'], option);
      checkInteger(policy.delayMs, at('delayMs'), QUEUE_OPTION_RANGES.backoffDelayMs);
      break;
    case 'exponential': {
      checkKnownKeys(policy, ['type', 'delayMs', 'maxDelayMs', 'jitter'], option);
      const delayMs = checkInteger(policy.delayMs, at('delayMs'), QUEUE_OPTION_RANGES.backoffDelayMs);
      if (policy.maxDelayMs !== undefined) {
        checkInteger(policy.maxDelayMs, at('maxDelayMs'), { min: delayMs, max: BACKOFF_MAX_MS });
      } else if (delayMs > DEFAULT_MAX_DELAY_MS) {
        // The default cap would silently shorten every delay below the one asked for.
        refuse(
          at('maxDelayMs'),
          `defaults to ${DEFAULT_MAX_DELAY_MS} ms, below delayMs ${delayMs}; give one`,
        );
      }
      if (policy.jitter !== undefined)
        checkNumber(policy.jitter, at('jitter'), QUEUE_OPTION_RANGES.backoffJitter);
      break;
    }
    case 'custom':
      checkKnownKeys(policy, ['type', 'delay'], option);
      if (typeof policy.delay !== 'function') refuse(at('delay'), 'a custom backoff needs a delay function');
      break;
    default:
      refuse(at('type'), `must be 'fixed', 'exponential' or 'custom', got ${describeValue(policy.type)}`);
  }
  return value as BackoffPolicy;
}
