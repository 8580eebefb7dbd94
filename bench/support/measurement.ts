import { SYSTEM_IDS } from '../systems';
import type { SystemId } from '../systems/types';

/** One row of the results: one value per system per round (index = round). */
export interface Measurement {
  /** Stable identifier, e.g. "drain.c50x1". */
  readonly key: string;
  /** Human label, e.g. "drain 20,000 jobs, 1 process x concurrency 50". */
  readonly figure: string;
  readonly unit: string;
  readonly better: 'higher' | 'lower';
  readonly values: Readonly<Record<SystemId, readonly number[]>>;
}

export function measurement(
  key: string,
  figure: string,
  unit: string,
  better: Measurement['better'],
  values: Record<SystemId, number[]>,
): Measurement {
  return { key, figure, unit, better, values };
}

/**
 * A row only EchoMQ has (the flow-control figures: the other systems have no lanes or
 * shared limits to compare): one value per round. `better` is absent where neither
 * direction is better (a rate that should sit at its limit).
 */
export interface SoloMeasurement {
  readonly key: string;
  readonly figure: string;
  readonly unit: string;
  readonly better?: 'higher' | 'lower';
  readonly values: readonly number[];
}

/** Picks one number out of per-round results, keeping the per-system, per-round shape. */
export function pick<T>(
  results: Readonly<Record<SystemId, readonly T[]>>,
  select: (result: T) => number,
): Record<SystemId, number[]> {
  return Object.fromEntries(SYSTEM_IDS.map((id) => [id, results[id].map(select)])) as Record<
    SystemId,
    number[]
  >;
}

export function formatNumber(value: number, unit: string): string {
  if (!Number.isFinite(value)) return 'n/a';
  const whole = unit === 'jobs/s' || unit === 'bytes' || unit === 'commands/min';
  const digits = whole ? 0 : value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
