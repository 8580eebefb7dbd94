import { assertLaneName } from '../keyspace';
import { checkFields, checkInteger, checkRecord, type OptionCheck } from '../option-checks';
import type { ScriptContext } from '../scripts';
import { isOutOfMemoryReply, typedOutOfMemory } from '../scripts/reply-errors';
import { repeatUntilKnown, type RepeatOptions } from '../scripts/repeat';
import { newRequestId } from '../scripts/request-id';
import { readLanes, type LaneView } from '../scripts/lane-reads';
import {
  pauseLane as pauseLaneScript,
  resumeLane as resumeLaneScript,
  setLaneSettings,
} from '../scripts/lanes';
import { readLimits, writeLimits, type FlowLimits } from '../scripts/set-limits';
import { asArgumentError, assertFlowLimits, LANE_SETTING_RANGES, refuseUnknownKeys } from './flow-limits';

/**
 * The admin calls of flow control (QueueService delegates here): the queue's shared limits,
 * a lane's own settings, pausing a lane or the whole queue. Every argument is checked before
 * a command is sent; each write is one script or one command, so it lands whole or not at all
 * (a resume then wakes the workers with a second one).
 * A script call whose reply was lost is repeated under its request id (`repeat`, as retry and
 * remove are), so it reports what happened instead of OutcomeUnknownError.
 */

/** A lane's own settings; null clears one (the lane then takes the default weight 1 / laneConcurrency). */
export interface LaneSettings {
  /** Its share against other lanes at the same priority: an integer from 1 to 1,000. Default 1. */
  readonly weight?: number | null;
  /** At most this many of its jobs active at once (1 to 1,000,000); overrides laneConcurrency for it. */
  readonly concurrency?: number | null;
}

const LANE_SETTING_CHECKS: { readonly [K in keyof LaneSettings]-?: OptionCheck } = {
  weight: (value, option) => {
    if (value !== null) checkInteger(value, option, LANE_SETTING_RANGES.weight);
  },
  concurrency: (value, option) => {
    if (value !== null) checkInteger(value, option, LANE_SETTING_RANGES.concurrency);
  },
};

/** Writes the limits given (null clears one; a limit left out stays as it is). Last writer wins. */
export async function setLimits(
  ctx: ScriptContext,
  limits: Partial<FlowLimits>,
  repeat: RepeatOptions,
): Promise<void> {
  const checked = assertFlowLimits(limits);
  if (Object.keys(checked).length === 0) return;
  const requestId = newRequestId();
  await repeatUntilKnown(() => writeLimits(ctx, checked, requestId), repeat);
}

export async function getLimits(ctx: ScriptContext): Promise<FlowLimits> {
  return readLimits(ctx);
}

export async function setLane(
  ctx: ScriptContext,
  lane: string,
  settings: LaneSettings,
  repeat: RepeatOptions,
): Promise<void> {
  assertLaneName(lane);
  try {
    const record = checkRecord(settings, 'settings');
    refuseUnknownKeys(record, Object.keys(LANE_SETTING_CHECKS), 'a lane setting');
    checkFields(record, LANE_SETTING_CHECKS, '');
  } catch (error) {
    throw asArgumentError(error);
  }
  const { weight, concurrency } = settings;
  if (weight === undefined && concurrency === undefined) return;
  const update = {
    ...(weight === undefined ? {} : { weight }),
    ...(concurrency === undefined ? {} : { concurrency }),
  };
  const requestId = newRequestId();
  await repeatUntilKnown(() => setLaneSettings(ctx, lane, update, requestId), repeat);
}

/** Workers stop claiming from the lane; its jobs stay pending, other lanes go on. Idempotent. */
export async function pauseLane(ctx: ScriptContext, lane: string, repeat: RepeatOptions): Promise<void> {
  assertLaneName(lane);
  const requestId = newRequestId();
  await repeatUntilKnown(() => pauseLaneScript(ctx, lane, requestId), repeat);
}

export async function resumeLane(ctx: ScriptContext, lane: string, repeat: RepeatOptions): Promise<void> {
  assertLaneName(lane);
  const requestId = newRequestId();
  await repeatUntilKnown(() => resumeLaneScript(ctx, lane, requestId), repeat);
}

export async function lanes(ctx: ScriptContext): Promise<LaneView[]> {
  return readLanes(ctx);
}

/**
 * Workers stop claiming from a paused queue; enqueue keeps working. A full Redis refuses the
 * flag (a write that grows memory): RedisOutOfMemoryError, nothing was written.
 */
export async function pauseQueue(ctx: ScriptContext): Promise<void> {
  try {
    await ctx.redis.set(ctx.keys.paused, '1');
  } catch (error) {
    throw typedOutOfMemory(error, ctx.redis, 'SET (pause the queue)');
  }
}

/**
 * Clears the pause flag, then wakes a blocked worker. Two commands, not a MULTI: a full Redis
 * refuses every command queued in a MULTI, and resuming a paused queue is how one that filled
 * Redis drains. The DEL frees memory, so a full Redis runs it; the wake token grows memory, so
 * a full Redis may refuse it, and that is harmless: a blocked worker also wakes at the end of
 * its bounded wait (at most 5 s) and finds the queue running. Nothing needs the two together:
 * a resume cut short after the DEL is a resumed queue whose workers wake at that bound.
 */
export async function resumeQueue(ctx: ScriptContext): Promise<void> {
  // Also lifts a hold a RateLimitedError set: an operator resuming a queue wants it to run.
  await ctx.redis.del(ctx.keys.paused, ctx.keys.hold);
  try {
    await ctx.redis.rpush(ctx.keys.wake, '1');
  } catch (error) {
    if (!isOutOfMemoryReply(error)) throw error;
  }
}

export async function isQueuePaused(ctx: ScriptContext): Promise<boolean> {
  return (await ctx.redis.exists(ctx.keys.paused)) === 1;
}
