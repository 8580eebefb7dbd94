import { describeValue, InvalidArgumentError } from '../errors';
import { assertLaneName } from '../keyspace';
import { replayWindow, type ScriptContext } from './context';
import { LANE_SETTING_FIELD_RANGES } from './lua/set-lane.lua';
import { newRequestId } from './request-id';
import { runScript } from './run-script';

export { readLanes, type LaneView } from './lane-reads';

/** A lane's own settings; null clears one, absent leaves it as it is. */
export interface LaneSettingsUpdate {
  /** Its share against other lanes at the same level: 1..1,000 (default 1). */
  readonly weight?: number | null;
  /** At most this many of its jobs active at once (1..1,000,000); overrides laneConcurrency. */
  readonly concurrency?: number | null;
}

const SETTING_FIELDS = { weight: 'w', concurrency: 'k' } as const;

/** The (field, value) pairs set-lane writes; '' clears. Throws before anything is sent. */
function settingArgs(settings: LaneSettingsUpdate): (string | number)[] {
  if (typeof settings !== 'object' || settings === null) {
    throw new InvalidArgumentError(`lane settings must be an object, got ${describeValue(settings)}`);
  }
  const args: (string | number)[] = [];
  for (const [key, value] of Object.entries(settings) as [string, unknown][]) {
    if (value === undefined) continue;
    if (!Object.hasOwn(SETTING_FIELDS, key)) {
      throw new InvalidArgumentError(`lane settings: unknown setting ${describeValue(key)}`);
    }
    const field = SETTING_FIELDS[key as keyof typeof SETTING_FIELDS];
    const { min, max } = LANE_SETTING_FIELD_RANGES[field];
    if (
      value !== null &&
      (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    ) {
      throw new InvalidArgumentError(
        `${key} must be an integer from ${min} to ${max} or null, got ${describeValue(value)}`,
      );
    }
    args.push(field, value === null ? '' : value);
  }
  return args;
}

/**
 * Writes a lane's own weight and concurrency (null clears one, absent leaves it). A lane its
 * cap held back returns to ready at once when the new cap allows. Throws InvalidArgumentError
 * before anything is sent; sends nothing when no setting is given. Repeating the call with the
 * same request id changes nothing more.
 */
export async function setLaneSettings(
  ctx: ScriptContext,
  lane: string,
  settings: LaneSettingsUpdate,
  requestId: string = newRequestId(),
): Promise<void> {
  const { keys } = ctx;
  const settingsKey = keys.laneSettings(lane);
  const args = settingArgs(settings);
  if (args.length === 0) return;
  await runScript(
    ctx,
    'emqSetLane',
    [keys.fence, keys.reply(requestId), settingsKey, keys.wake],
    [lane, replayWindow(ctx), args.length / 2, ...args],
  );
}

/**
 * Workers claim nothing from the lane until resumeLane; its jobs stay pending, other lanes go
 * on. Idempotent. True when the lane was not paused before.
 */
export async function pauseLane(
  ctx: ScriptContext,
  lane: string,
  requestId: string = newRequestId(),
): Promise<boolean> {
  const { keys } = ctx;
  return switchLane(ctx, 'emqPauseLane', lane, [
    keys.fence,
    keys.reply(requestId),
    keys.pausedLanes,
    keys.events,
  ]);
}

/**
 * The lane is claimed from again (unless its cap, rate window or a throttle still holds it).
 * Idempotent. True when the lane was paused before.
 */
export async function resumeLane(
  ctx: ScriptContext,
  lane: string,
  requestId: string = newRequestId(),
): Promise<boolean> {
  const { keys } = ctx;
  return switchLane(ctx, 'emqResumeLane', lane, [
    keys.fence,
    keys.reply(requestId),
    keys.pausedLanes,
    keys.events,
    keys.wake,
  ]);
}

/** Pause and resume take the same arguments and answer 1 when they changed the lane. */
async function switchLane(
  ctx: ScriptContext,
  script: 'emqPauseLane' | 'emqResumeLane',
  lane: string,
  keys: string[],
): Promise<boolean> {
  const reply = await runScript(ctx, script, keys, [
    assertLaneName(lane),
    ctx.eventsMaxLen,
    replayWindow(ctx),
  ]);
  return Number(reply) === 1;
}
