import type { ClaimBatch } from '../scripts';

/**
 * Longest an idle loop blocks before it claims again anyway: a safety net for a wake token that
 * never came, not a poll, and the bound within which a blocked connection that went silent on its
 * own (its command connection healthy, so nothing else ends the read) is noticed by its watchdog.
 * That second job keeps it short: at 60 s a worker whose wake socket alone was silenced by the
 * network stayed deaf for a minute (chaos network-faults). It is the largest part of an idle
 * worker's cost: one BLPOP and one claim per queue per bound.
 */
export const IDLE_MAX_MS = 5_000;
/** Longest one sleep of a limited loop: a limit set far ahead (or cleared meanwhile) is looked at again by then. */
export const LIMITED_SLEEP_MAX_MS = 60_000;

/**
 * What a loop does after a claim that did not fill its free slots:
 * - limited: the queue is rate-limited or held; no claim can succeed before `ms`, and an
 *   enqueue does not change that, so the loop sleeps off the wake list. One claim per
 *   window is all a limited worker costs Redis.
 * - idle: pending is empty (or paused, or every lane is held): block on the wake list until an
 *   enqueue, a retry or a release signals, bounded by the next run-at (a schedule or lane timer).
 * null: the claim got every job it asked for; claim again at once.
 */
export type ClaimPause = { readonly until: 'limit' | 'wake'; readonly ms: number } | null;

export function pauseAfter(batch: ClaimBatch, asked: number): ClaimPause {
  if (batch.limitedUntil !== null) {
    // At least 1 ms, so a limit that ends now cannot spin the loop against Redis.
    const ms = Math.max(1, Math.min(LIMITED_SLEEP_MAX_MS, batch.limitedUntil - batch.serverNow));
    return { until: 'limit', ms };
  }
  if (batch.jobs.length >= asked) return null;
  const untilDue = batch.nextRunAt === null ? IDLE_MAX_MS : batch.nextRunAt - batch.serverNow;
  return { until: 'wake', ms: Math.max(0, Math.min(IDLE_MAX_MS, untilDue)) };
}
