import { describeValue, InvalidArgumentError } from '../errors';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import type { RepairMode } from '../scripts/repair-mode';

/**
 * How long past its deadline a lease may be before the doctor reports it, by default: twice the
 * longest reaper interval a deployment may configure (module option reaper.intervalMs, at most
 * 60,000 ms), so a healthy deployment, whose reapers return expired leases tick by tick, is never
 * reported. A lower grace finds a stopped reaper sooner where the interval is short; keep it above
 * the interval plus the time a tick takes.
 */
export const DEFAULT_LEASE_GRACE_MS = 120_000;

export interface DoctorOptions {
  /** Mend what is found, each finding in the call that finds it. Default false: only look. */
  readonly repair?: boolean;
  /** Ids (or lanes) listed per finding: 1 to 1,000. Default 10. */
  readonly idsShown?: number;
  /**
   * How long past its deadline an active lease may be before it is reported (the wait for the
   * next reaper tick is normal): 0 to 3,600,000 ms. Default DEFAULT_LEASE_GRACE_MS (120,000).
   */
  readonly leaseGraceMs?: number;
  /** Jobs (or lanes) per script call: 1 to 500 (SCRIPT_BATCH_MAX). Default 200. */
  readonly batch?: number;
}

export interface ResolvedDoctorOptions {
  readonly mode: RepairMode;
  readonly idsShown: number;
  readonly leaseGraceMs: number;
  readonly batch: number;
}

function integerIn(value: unknown, what: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(
      `${what} must be an integer from ${min} to ${max}, got ${describeValue(value)}`,
    );
  }
  return value;
}

/** The options with their defaults; InvalidArgumentError before anything is sent. */
export function resolveDoctorOptions(options: DoctorOptions): ResolvedDoctorOptions {
  if (options.repair !== undefined && typeof options.repair !== 'boolean') {
    throw new InvalidArgumentError(`repair must be true or false, got ${describeValue(options.repair)}`);
  }
  return {
    mode: options.repair ? 'repair' : 'check',
    idsShown: integerIn(options.idsShown, 'idsShown', 1, 1_000, 10),
    leaseGraceMs: integerIn(options.leaseGraceMs, 'leaseGraceMs', 0, 3_600_000, DEFAULT_LEASE_GRACE_MS),
    batch: integerIn(options.batch, 'batch', 1, SCRIPT_BATCH_MAX, 200),
  };
}
