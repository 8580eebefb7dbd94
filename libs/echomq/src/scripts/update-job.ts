import { JobStateError } from '../errors';
import { replayWindow, type ScriptContext } from './context';
import { translateReplyError } from './reply-errors';
import { newRequestId } from './request-id';
import { runScript } from './run-script';

/** A checked update (queue/job-control/update-patch.ts builds it); absent fields are kept. */
export interface JobUpdateRecord {
  /** The new payload as JSON. */
  readonly data?: string;
  /** Run at this instant (ms since epoch); wins over delayMs. */
  readonly runAtMs?: number;
  /** Run this many ms after the script runs (server clock). */
  readonly delayMs?: number;
  readonly lane?: string;
  readonly priority?: number;
}

/** The state an updated job is in afterwards. */
export type UpdatedJobState = 'pending' | 'schedule' | 'dead';

/** States named in the JobStateError of each refusal. */
const REFUSALS: Record<string, string> = {
  ACTIVE: 'pending, scheduled or dead (it is active)',
  FINISHED: 'pending, scheduled or dead (it finished)',
  DEAD_RUN_AT: 'pending or scheduled (a dead job has no run-at: retry it first)',
  OCCURRENCE_RUN_AT:
    'a job of its own (it is an occurrence of a schedule, which sets its run-at: change the schedule with upsertSchedule, or promote the occurrence)',
};

/**
 * Rewrites a job that is not active. Throws JobNotFoundError, or JobStateError when the job
 * is active, finished, or dead and given a run-at. Repeating a call that succeeded with the
 * same request id returns the same state, changing nothing.
 */
export async function updateJob(
  ctx: ScriptContext,
  id: string,
  update: JobUpdateRecord,
  requestId: string = newRequestId(),
): Promise<UpdatedJobState> {
  const { keys } = ctx;
  const text = (value: string | number | undefined): string | number => value ?? '';
  try {
    return (await runScript(
      ctx,
      'emqUpdateJob',
      [
        keys.fence,
        keys.reply(requestId),
        keys.active,
        keys.schedule,
        keys.dead,
        keys.metrics,
        keys.events,
        keys.wake,
        keys.job(id),
      ],
      [
        id,
        text(update.data),
        text(update.runAtMs),
        text(update.delayMs),
        text(update.lane),
        text(update.priority),
        ctx.eventsMaxLen,
        replayWindow(ctx),
      ],
    )) as UpdatedJobState;
  } catch (error) {
    const code = error instanceof Error ? /^(?:ERR )?EMQ_([A-Z_]+)/.exec(error.message)?.[1] : undefined;
    if (code && REFUSALS[code]) throw new JobStateError(id, REFUSALS[code]);
    translateReplyError(error, id);
  }
}
