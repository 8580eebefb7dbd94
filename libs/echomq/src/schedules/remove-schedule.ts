import type { ScriptContext } from '../scripts/context';
import { repeatUntilKnown, type RepeatOptions } from '../scripts/repeat';
import { newRequestId } from '../scripts/request-id';
import { removeScheduleScript } from '../scripts/schedules';
import { assertScheduleKey } from './schedule-definition';

/** Removes a schedule and its waiting next occurrence; false when there was none. */
export async function removeSchedule(
  ctx: ScriptContext,
  key: string,
  repeat: RepeatOptions,
): Promise<boolean> {
  assertScheduleKey(key);
  const requestId = newRequestId();
  return repeatUntilKnown(() => removeScheduleScript(ctx, key, requestId), repeat);
}
