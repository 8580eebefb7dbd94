/**
 * How much of the dead set a queue keeps (docs/retention.md). Dead is trimmed by the scripts
 * that insert into it (fail, reap), in the same call, as Sidekiq's morgue is: there is no
 * sweeper to fall behind.
 */

/** What the process that moves a job to dead applies (from its resolved queue options). */
export interface DeadRetention {
  /** Most jobs dead keeps; the oldest (mint order) go first. 0 keeps none. */
  readonly deadMaxJobs: number;
  /** Most age since enqueue (the id's time) a dead job may have, ms; null: no age limit. */
  readonly deadMaxAgeMs: number | null;
}

/** 10,000 jobs, like Sidekiq's morgue; no age limit. */
export const DEAD_RETENTION_DEFAULTS: DeadRetention = { deadMaxJobs: 10_000, deadMaxAgeMs: null };

const DAY_MS = 24 * 3_600_000;

export const DEAD_RETENTION_RANGES = {
  deadMaxJobs: { min: 0, max: 10_000_000 },
  deadMaxAgeMs: { min: 1_000, max: 3_650 * DAY_MS },
} as const;

/**
 * Most jobs one inserting call trims beyond the ones it inserted: a cap lowered by 50,000
 * converges over 500 inserts instead of one call that blocks Redis. Inserting calls trim at
 * least as many as they insert, so a full dead set stays at its cap under any failure rate.
 */
export const DEAD_TRIM_MAX = 100;

/** The two script arguments: the cap, and the age limit (0 for none). */
export function deadRetentionArgs(retention: DeadRetention): [number, number] {
  return [retention.deadMaxJobs, retention.deadMaxAgeMs ?? 0];
}
