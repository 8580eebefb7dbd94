/**
 * What every command of the model-based test shares: the step frame (count, run, verify) and
 * the ways a command picks its targets. Commands are generated without knowing the state
 * (they carry indices and choices) and resolve their targets against the model when they run.
 */
import type { ClaimRef } from '@app/echomq/internal';
import type fc from 'fast-check';
import type { Model, Place } from '../reference';
import { count, type System } from '../system';

export type Cmd = fc.AsyncCommand<Model, System>;

/** Steps run per sequence at most (fewer in runs at the batch maxima); the generated sequence is longer. */
export const MAX_STEPS = 40;
export const MAX_BULK_STEPS = 20;
/** Ids one run may mint at most (bounds the work of every check). */
export const MAX_IDS = 2_300;

export abstract class Step implements Cmd {
  /** Whether the command makes sense in this state (else fast-check skips it). */
  abstract applicable(m: Readonly<Model>): boolean;
  abstract toString(): string;
  protected abstract exec(m: Model, r: System): Promise<void>;

  check(m: Readonly<Model>): boolean {
    return m.steps < (m.bulk ? MAX_BULK_STEPS : MAX_STEPS) && this.applicable(m);
  }

  async run(m: Model, r: System): Promise<void> {
    m.steps += 1;
    r.note(`${m.steps}. ${this.toString()}`);
    count(this.constructor.name);
    const started = Date.now();
    await this.exec(m, r);
    for (const why of m.restored.splice(0)) count(`flow: lane restored (${why.replace(/^\S+ by /, 'by ')})`);
    const ran = Date.now();
    await r.verify(m);
    count(`time: ${this.constructor.name} (ms)`, ran - started);
    count(`time: verify${m.bulk ? ' in bulk runs' : ''} (ms)`, Date.now() - ran);
  }
}

/** " (reply lost)" when a command's first reply is dropped and the call sent again. */
export function lostTag(lost: boolean): string {
  return lost ? ' (reply lost)' : '';
}

// ------------------------------------------------------------------ picking claims

/** How a complete / fail / extend / release chooses the claim it presents. */
export interface ClaimPick {
  /**
   * current: the current claim of an active job; superseded: a claim that is no longer current
   * (its job was completed, failed, released, reaped or removed since), preferring jobs that are
   * active again under a newer claim; log: any claim ever handed out.
   */
  readonly source: 'current' | 'superseded' | 'log';
  readonly index: number;
  /** Present the claim as is, or tamper with its token or claimant (always stale then). */
  readonly forge: 'none' | 'tokenUp' | 'tokenDown' | 'claimant';
}

/** Many claims at once, up to the batch maximum: the current claims in id order, with stale ones among them. */
export interface BulkPick {
  readonly count: number;
  /** How many of them are stale (superseded claims, or forged tokens when there are none). */
  readonly stale: number;
  /** Newest active job first. */
  readonly reverse: boolean;
}

export type Picks =
  | { readonly kind: 'few'; readonly picks: readonly ClaimPick[] }
  | { readonly kind: 'bulk'; readonly bulk: BulkPick };

export function showPicks(picks: Picks): string {
  if (picks.kind === 'few') return JSON.stringify(picks.picks);
  const { count: n, stale, reverse } = picks.bulk;
  return `${n} claims (${stale} stale${reverse ? ', newest first' : ''})`;
}

export function resolveClaim(m: Model, pick: ClaimPick): ClaimRef {
  let ref: ClaimRef;
  const active = m.inPlace('active');
  if (pick.source === 'current' && active.length > 0) {
    const job = active[pick.index % active.length];
    ref = { id: job.id, attempt: job.attempts, claimant: job.claimant! };
  } else if (pick.source === 'superseded' && m.claims.some((c) => !m.holds(c))) {
    const old = m.claims.filter((c) => !m.holds(c));
    const reclaimed = old.filter((c) => m.jobs.get(c.id)?.place === 'active');
    const from = reclaimed.length > 0 && pick.index % 3 !== 0 ? reclaimed : old;
    ref = from[pick.index % from.length];
  } else {
    ref = m.claims[pick.index % m.claims.length];
  }
  switch (pick.forge) {
    case 'none':
      return ref;
    case 'tokenUp':
      return { ...ref, attempt: ref.attempt + 1 };
    case 'tokenDown':
      return { ...ref, attempt: ref.attempt - 1 };
    case 'claimant': {
      // Another worker's claimant (an id unique to some other claim), with this claim's token.
      const other = m.claims.find((c) => c.claimant !== ref.claimant);
      return { ...ref, claimant: other ? other.claimant : `${ref.claimant}x` };
    }
  }
}

function resolveBulk(m: Model, bulk: BulkPick): ClaimRef[] {
  const active = m.inPlace('active');
  if (bulk.reverse) active.reverse();
  const refs: ClaimRef[] = active
    .slice(0, Math.max(0, bulk.count - bulk.stale))
    .map((job) => ({ id: job.id, attempt: job.attempts, claimant: job.claimant! }));
  const old = m.claims.filter((c) => !m.holds(c));
  const stale: ClaimRef[] = [];
  for (let i = 0; i < bulk.stale && i < bulk.count; i++) {
    if (old.length > 0) stale.push(old[(i * 7) % old.length]);
    else if (refs.length > 0)
      stale.push({ ...refs[i % refs.length], attempt: refs[i % refs.length].attempt + 1 });
  }
  stale.forEach((ref, i) => refs.splice((i * 37) % (refs.length + 1), 0, ref));
  return refs.length > 0 ? refs : [m.claims[0]];
}

export function resolvePicks(m: Model, picks: Picks): ClaimRef[] {
  return picks.kind === 'few' ? picks.picks.map((pick) => resolveClaim(m, pick)) : resolveBulk(m, picks.bulk);
}

/** The claims for the trace (and the coverage counts). */
export function showClaims(m: Model, refs: readonly ClaimRef[], picks: Picks): string {
  if (picks.kind === 'bulk') {
    const held = refs.filter((ref) => m.holds(ref)).length;
    count(`bulk claims presented: ${refs.length >= 1000 ? '1000' : refs.length >= 500 ? '500+' : 'fewer'}`);
    return `${refs.length} claims, ${held} current, ${refs.length - held} stale`;
  }
  return refs.map((ref, i) => showClaim(m, ref, picks.picks[i])).join(', ');
}

export function showClaim(m: Model, ref: ClaimRef, pick: ClaimPick): string {
  const place = m.jobs.get(ref.id)?.place ?? 'never created';
  const how =
    pick.forge !== 'none' ? `forged ${pick.forge}` : `ended by ${m.endedBy.get(ref.claimant) ?? 'nothing'}`;
  count(m.holds(ref) ? 'claim presented: current' : `claim presented: stale (${how}, job now ${place})`);
  return `${m.label(ref.id)}@${ref.attempt}/${ref.claimant}${m.holds(ref) ? '' : ' (stale)'}`;
}

// ------------------------------------------------------------------ picking jobs

export type Pool = Place | 'any';

/** A job id from one state, falling back to any id this run minted. */
export function resolveId(m: Model, pool: Pool, index: number): string {
  const candidates = pool === 'any' ? [] : m.inPlace(pool).map((job) => job.id);
  const ids = candidates.length > 0 ? candidates : m.allIds();
  return ids[index % ids.length];
}
