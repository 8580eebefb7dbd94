import { InvalidArgumentError } from '../errors';
import { replayWindow, type ClaimRef, type ScriptContext } from './context';
import { JOB_LOG_LINE_MAX_BYTES } from './lua/job-log.lua';
import { newRequestId } from './request-id';
import { translateReplyError } from './reply-errors';
import { runScript } from './run-script';

export { JOB_LOG_LINE_MAX_BYTES, JOB_LOG_LINES_KEPT } from './lua/job-log.lua';

/** Refuses a line job.log() does not take, before anything is sent. */
export function assertLogLine(line: unknown): asserts line is string {
  if (typeof line !== 'string') {
    throw new InvalidArgumentError(`A log line must be a string, not ${typeof line}`);
  }
  const bytes = Buffer.byteLength(line, 'utf8');
  if (bytes > JOB_LOG_LINE_MAX_BYTES) {
    throw new InvalidArgumentError(
      `A log line is at most ${JOB_LOG_LINE_MAX_BYTES} bytes (UTF-8); this one has ${bytes}`,
    );
  }
}

/**
 * Appends one line to a running job's log and returns its number (1 for the job's first).
 * Throws InvalidArgumentError for a line over JOB_LOG_LINE_MAX_BYTES (nothing is sent) and
 * StaleJobError when the claim is no longer current. Repeating a call that succeeded with
 * the same request id returns the same number and appends nothing.
 */
export async function appendJobLog(
  ctx: ScriptContext,
  claim: ClaimRef,
  line: string,
  requestId: string = newRequestId(),
): Promise<number> {
  assertLogLine(line);
  const { keys } = ctx;
  try {
    return (await runScript(
      ctx,
      'emqJobLog',
      [keys.fence, keys.reply(requestId), keys.job(claim.id)],
      [claim.id, claim.attempt, claim.claimant, line, replayWindow(ctx)],
    )) as number;
  } catch (error) {
    translateReplyError(error, claim.id, claim.attempt);
  }
}
