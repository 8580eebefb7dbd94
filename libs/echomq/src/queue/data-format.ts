import { DataFormatError } from '../errors';
import type { ScriptContext } from '../scripts';
import { execAll } from '../connection/exec-all';

/**
 * The newest data format this code reads and writes, recorded per queue in `<p>:{q}:format`
 * (docs/upgrading.md). A release that changes what is stored (row fields, sets, script
 * arguments that persist) in a way an older release would misread raises it.
 *
 * Format 1: the four state sets (pending and dead scored 0 and ordered by id, active scored
 * by lease deadline, schedule by run-at), rows as hashes with the one-letter fields of
 * docs/model.md (`d` chunked data, `n`, `m` (a job's own budget), `w`, `o`, `a`, `b`, `c`, `e`, `r`,
 * `f`, `k`, `p`), the
 * metrics hash, the event stream, the wake list, the pause flag, idempotency and reply keys.
 * A queue written before formats were recorded is format 1.
 */
export const DATA_FORMAT = 1;

/**
 * Records DATA_FORMAT on a queue that has no format yet (SET NX) and reads the format back,
 * in one MULTI on the queue's slot, so the first process to use a queue fixes its format and
 * every later one reads it. Returns the stored format when this code knows it.
 * @throws DataFormatError when the stored format is newer than DATA_FORMAT (or not a format
 *   at all); SET NX wrote nothing then, since the key was there.
 */
export async function ensureDataFormat(ctx: ScriptContext): Promise<number> {
  const { redis, keys } = ctx;
  const [, stored] = await execAll(
    redis.multi().set(keys.format, DATA_FORMAT, 'NX').get(keys.format),
    `The data-format check of queue ${keys.queue}`,
  );
  return knownFormat(keys.queue, String(stored));
}

/** The stored format as a number, when this code knows it; DataFormatError otherwise. */
export function knownFormat(queue: string, text: string): number {
  const format = /^[1-9][0-9]{0,8}$/.test(text) ? Number(text) : Number.NaN;
  if (!(format <= DATA_FORMAT)) throw new DataFormatError(queue, text, DATA_FORMAT);
  return format;
}

/**
 * Reads a queue's recorded format without writing one: for processes that touch queues
 * they do not otherwise use (the reaper walks every registered queue).
 * @throws DataFormatError when the stored format is newer than DATA_FORMAT.
 */
export async function checkDataFormat(ctx: ScriptContext): Promise<void> {
  const text = await ctx.redis.get(ctx.keys.format);
  if (text !== null) knownFormat(ctx.keys.queue, text);
}
