import { assertJobId, type QueueKeys } from '../keyspace';
import { replayWindow, type ScriptContext } from './context';
import { newRequestId } from './request-id';
import { translateReplyError } from './reply-errors';
import { runScript } from './run-script';

/**
 * Wrappers of the schedule transitions (upsert-schedule, advance-schedule, remove-schedule).
 * Each is replay-safe under its request id: repeated after a lost reply, it returns the first
 * call's reply and writes nothing more. Arguments are checked by the callers (schedules/).
 */

/**
 * The KEYS every schedule transition declares, in its headers' order: fence, reply, schedule,
 * schedulers, scheduler-next, metrics, events, and wake for the two that create an occurrence.
 */
function scheduleKeys(keys: QueueKeys, requestId: string, withWake: boolean): string[] {
  const declared = [
    keys.fence,
    keys.reply(requestId),
    keys.schedule,
    keys.schedulers,
    keys.schedulerNext,
    keys.metrics,
    keys.events,
  ];
  return withWake ? [...declared, keys.wake] : declared;
}

export interface UpsertScheduleCall {
  readonly key: string;
  /** The canonical definition text (schedules/schedule-definition.ts). */
  readonly definition: string;
  readonly id: string;
  readonly runAtMs: number;
  /** The upsert's trace context, carried by its occurrences (row 'tc'); absent: none. */
  readonly traceContext?: string;
}

export interface UpsertScheduleReply {
  readonly outcome: 'created' | 'updated' | 'unchanged';
  readonly id: string;
  readonly runAtMs: number;
}

export async function upsertScheduleScript(
  ctx: ScriptContext,
  call: UpsertScheduleCall,
  requestId: string = newRequestId(),
): Promise<UpsertScheduleReply> {
  const { keys } = ctx;
  try {
    const [outcome, id, runAt] = (await runScript(
      ctx,
      'emqUpsertSchedule',
      scheduleKeys(keys, requestId, true),
      [
        keys.jobPrefix,
        call.key,
        call.definition,
        assertJobId(call.id),
        call.runAtMs,
        ctx.eventsMaxLen,
        replayWindow(ctx),
        call.traceContext ?? '',
      ],
    )) as [UpsertScheduleReply['outcome'], string, number];
    return { outcome, id, runAtMs: Number(runAt) };
  } catch (error) {
    translateReplyError(error, call.id);
  }
}

export interface AdvanceScheduleCall {
  readonly key: string;
  /** The next occurrence the caller saw; null when the schedule had none. */
  readonly expectedId: string | null;
  /** sha1 of the definition text the run-at was computed from. */
  readonly digest: string;
  readonly id: string;
  /** 0: the cron pattern has no run left; the schedule ends (is removed) instead. */
  readonly runAtMs: number;
  /** Replace the expected occurrence while it still waits (the 'skip' policy). */
  readonly replace: boolean;
  /**
   * The expected occurrence's trace context as its claim handed it over (ClaimedJobRecord
   * .traceContext): the new occurrence carries it when the expected one's row is gone.
   */
  readonly traceContext?: string;
}

/** 'OK': the schedule advanced or ended (or had already, under this id); 'STALE': nothing written. */
export async function advanceScheduleScript(
  ctx: ScriptContext,
  call: AdvanceScheduleCall,
  requestId: string = newRequestId(),
): Promise<'OK' | 'STALE'> {
  const { keys } = ctx;
  try {
    return (await runScript(ctx, 'emqAdvanceSchedule', scheduleKeys(keys, requestId, true), [
      keys.jobPrefix,
      call.key,
      call.expectedId === null ? '' : assertJobId(call.expectedId),
      call.digest,
      assertJobId(call.id),
      call.runAtMs,
      call.replace ? 1 : 0,
      ctx.eventsMaxLen,
      replayWindow(ctx),
      call.traceContext ?? '',
    ])) as 'OK' | 'STALE';
  } catch (error) {
    translateReplyError(error, call.id);
  }
}

/** True when the schedule existed (and is removed now). */
export async function removeScheduleScript(
  ctx: ScriptContext,
  key: string,
  requestId: string = newRequestId(),
): Promise<boolean> {
  const { keys } = ctx;
  const removed = await runScript(ctx, 'emqRemoveSchedule', scheduleKeys(keys, requestId, false), [
    keys.jobPrefix,
    key,
    ctx.eventsMaxLen,
    replayWindow(ctx),
  ]);
  return Number(removed) === 1;
}
