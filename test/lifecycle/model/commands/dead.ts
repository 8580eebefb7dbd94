/**
 * How much of dead a fail or reap step keeps (deadMaxJobs, deadMaxAgeMs; trimmed on insert by
 * into_dead): mostly the defaults, now and then a cap of a few jobs so trimming happens, or an
 * age limit that falls just after one dead job's id time (./ids.ts), so exactly the jobs
 * minted up to it are too old.
 */
import { DEAD_RETENTION_DEFAULTS, type DeadRetention } from '@app/echomq/internal';
import fc from 'fast-check';
import { ageAt } from '../ids';
import type { DeadRule, Model } from '../reference';
import { count, type System } from '../system';

export type DeadKeep = null | { readonly cap: number } | { readonly cap: number; readonly ageOf: number };

export const deadKeep: fc.Arbitrary<DeadKeep> = fc.oneof(
  { arbitrary: fc.constant(null), weight: 5 },
  { arbitrary: fc.integer({ min: 0, max: 4 }).map((cap) => ({ cap })), weight: 3 },
  {
    arbitrary: fc
      .tuple(fc.constantFrom(DEAD_RETENTION_DEFAULTS.deadMaxJobs, 3), fc.nat(7))
      .map(([cap, ageOf]) => ({ cap, ageOf })),
    weight: 2,
  },
);

export function showDeadKeep(keep: DeadKeep): string {
  if (keep === null) return '';
  return ` dead<=${keep.cap}${'ageOf' in keep ? ` age<=#${keep.ageOf}` : ''}`;
}

/** What to send and what the model goes by; `going` are the jobs this step may send to dead. */
export function resolveDeadKeep(
  m: Model,
  r: System,
  keep: DeadKeep,
  going: readonly string[],
): { retention: DeadRetention | undefined; rule: DeadRule | undefined } {
  if (keep === null) return { retention: undefined, rule: undefined };
  if (!('ageOf' in keep)) {
    return {
      retention: { deadMaxJobs: keep.cap, deadMaxAgeMs: null },
      rule: { cap: keep.cap, cutoff: null },
    };
  }
  const ids = [...m.inPlace('dead').map((job) => job.id), ...going].sort();
  const pool = ids.length > 0 ? ids : m.allIds();
  if (pool.length === 0) return { retention: undefined, rule: undefined };
  const { ageMs, cutoff } = ageAt(pool[keep.ageOf % pool.length], r.serverNow);
  r.note(
    `   dead keeps ${keep.cap}, jobs minted up to ${m.label(pool[keep.ageOf % pool.length])}'s time are too old`,
  );
  count('dead: an age limit');
  return { retention: { deadMaxJobs: keep.cap, deadMaxAgeMs: ageMs }, rule: { cap: keep.cap, cutoff } };
}

/** Coverage of one insert into dead. */
export function countTrimmed(m: Model): void {
  const n = m.lastTrimmed.length;
  if (n > 0) count(`dead: trimmed on insert (${n > 1 ? 'several' : 'one'})`);
}
