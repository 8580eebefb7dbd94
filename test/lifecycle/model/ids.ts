/**
 * The run's ids and time: ids are minted on a clock of the run's own (./system.ts runMinters)
 * that starts days in the past and moves ID_TICK_MS every few ids. So an age cutoff (dead's
 * deadMaxAgeMs, clean's olderThanMs) placed a little after one id's time splits the ids the
 * same way whatever instant the script reads the server's clock at: the model can predict it.
 */
import { JOB_IDS, snowflakeParts } from '@app/echomq/internal';

export const ID_TICK_MS = 60_000;
export const ID_CLOCK_START_AGO_MS = 3 * 86_400_000;
/** Where a cutoff goes after the id time it is placed at: far from both neighbouring ticks. */
const CUTOFF_AFTER_MS = 10_000;

/** The Unix ms an id of this run was minted at (its Snowflake time). */
export function idTime(id: string): number {
  const value = JOB_IDS.decode(id);
  if (value === undefined) throw new Error(`model: ${id} is not a job id`);
  return snowflakeParts(value).timeMs;
}

/**
 * An age limit that makes every id minted at or before `id`'s time too old, and none after:
 * { age to send (from the server time of the last check), the id-time cutoff it stands for }.
 */
export function ageAt(id: string, serverNow: number): { ageMs: number; cutoff: number } {
  const cutoff = idTime(id) + CUTOFF_AFTER_MS;
  return { ageMs: serverNow - cutoff, cutoff };
}
