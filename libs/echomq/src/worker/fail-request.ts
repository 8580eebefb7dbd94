import { UnrecoverableError } from '../errors';
import type { BackoffPolicy } from '../queue/queue-options';
import type { ClaimedJobRecord, FailRequest } from '../scripts';
import { DEAD_RETENTION_DEFAULTS, type DeadRetention } from '../scripts/dead-retention';
import { ERROR_STACK_MAX, ERROR_TEXT_MAX } from '../scripts/limits';
import { backoffDelay, storedBackoff } from './backoff';

/** Room (bytes) kept for the note about a backoff that failed, so the handler's error stays readable. */
const NOTE_MAX = 512;

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** The stack trace when the error has one (its first line repeats the error's name and message). */
function stackOf(error: unknown): { stack?: string } {
  const stack = error instanceof Error ? error.stack : undefined;
  return typeof stack === 'string' && stack !== '' ? { stack: cut(stack, ERROR_STACK_MAX) } : {};
}

/** A UTF-8 continuation byte (10xxxxxx): the middle of a character. */
const isContinuation = (byte: number): boolean => (byte & 0xc0) === 0x80;

/**
 * `text` in at most `maxBytes` UTF-8 bytes, ending in '...' when cut. The script keeps that
 * many bytes of it (row 'e' and 'es'), so the cut is made here, between two characters: a cut
 * there could split one, leaving the row invalid UTF-8 and losing the '...'.
 */
function cut(text: string, maxBytes: number): string {
  // (a string's UTF-8 is at most 3 bytes per UTF-16 unit: a short one needs no count)
  if (text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes) return text;
  const bytes = Buffer.from(text);
  let end = Math.max(0, maxBytes - 3);
  while (end > 0 && isContinuation(bytes[end])) end--;
  return `${bytes.subarray(0, end).toString()}...`;
}

/**
 * What to tell Redis about a failed attempt. The wait is the job's own backoff when it was
 * enqueued with one, else the serving worker's `policy`. The stored error is the handler's:
 * a custom backoff function that throws (or a stored policy this worker cannot read) must not
 * turn a failure into an unsettled job (the lease would run out and the handler's error be
 * lost), so its error is only noted after the handler's, and the retry waits no delay (0 puts
 * the job straight back into pending). `dead` is how much of dead the serving worker keeps
 * (its deadMaxJobs and deadMaxAgeMs), applied when this failure sends the job there.
 */
export function failRequest(
  policy: BackoffPolicy,
  record: ClaimedJobRecord,
  error: unknown,
  dead: DeadRetention = DEAD_RETENTION_DEFAULTS,
): FailRequest {
  let backoffMs = 0;
  let note = '';
  try {
    const own = record.backoff === null ? undefined : storedBackoff(record.backoff);
    backoffMs = backoffDelay(own ?? policy, record.attempt - record.budgetBase, error);
  } catch (backoffError) {
    note = cut(`; backoff failed: ${describe(backoffError)}`, NOTE_MAX);
  }
  return {
    error: cut(describe(error), ERROR_TEXT_MAX - Buffer.byteLength(note)) + note,
    ...stackOf(error),
    backoffMs,
    unrecoverable: error instanceof UnrecoverableError,
    dead: { deadMaxJobs: dead.deadMaxJobs, deadMaxAgeMs: dead.deadMaxAgeMs },
  };
}
