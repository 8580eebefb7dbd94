import { execAll } from '../connection/exec-all';
import type { ScriptContext } from '../scripts';

/**
 * Reads of the holds that keep a queue or a lane from starting jobs for a while: a handler's
 * RateLimitedError (docs/flow-control.md), and for a lane also its own rate limit. Without them
 * an operator would see pending jobs, a queue that is not paused, and nothing claimed. Each
 * read is one pipeline ending with TIME, so "until" is an instant on the Redis server's clock,
 * the clock the claim compares it with, and a hold that had run out when read is never shown.
 *
 * A pipeline, not a MULTI: a full Redis refuses every command queued in a MULTI, reads too,
 * and these are what an operator reads while Redis is full. Little is lost by it: TIME comes
 * after the other reads, so a queue hold's "until" (TIME + PTTL) is late by at most the gap
 * between the two commands (microseconds in one pipeline, a round trip at worst), and lane
 * holds are compared with a clock read no earlier than they were.
 */

function serverMs(time: unknown): number {
  const [seconds, micros] = time as [string, string];
  return Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000);
}

/** Until when the whole queue is held back (a RateLimitedError of scope 'queue'), or null. */
export async function queueHeldUntil(ctx: ScriptContext): Promise<Date | null> {
  const [left, time] = await execAll(
    ctx.redis.pipeline().pttl(ctx.keys.hold).time(),
    `The hold of queue ${ctx.keys.queue}`,
  );
  // -2: no hold; -1 (a hold without expiry) is not one the claim honours either.
  const ms = Number(left);
  return ms > 0 ? new Date(serverMs(time) + ms) : null;
}

/**
 * Each lane held back until a server instant still ahead, soonest first: by a handler's
 * RateLimitedError of scope 'lane' (lane-holds) or by the lane's own rate limit until its window
 * opens (lane-timers); a lane in both shows the later. Costs O(lanes timed): one entry per such lane.
 */
export async function laneHoldsOf(ctx: ScriptContext): Promise<Record<string, Date>> {
  const { redis, keys } = ctx;
  const [holds, timers, time] = await execAll(
    redis
      .pipeline()
      .zrange(keys.laneHolds, 0, -1, 'WITHSCORES')
      .zrange(keys.laneTimers, 0, -1, 'WITHSCORES')
      .time(),
    `The lane holds of queue ${keys.queue}`,
  );
  const now = serverMs(time);
  const until = new Map<string, number>();
  for (const flat of [holds, timers] as string[][]) {
    for (let index = 0; index < flat.length; index += 2) {
      const [lane, at] = [flat[index], Number(flat[index + 1])];
      if (at > now && at > (until.get(lane) ?? 0)) until.set(lane, at);
    }
  }
  const soonestFirst = [...until].sort(([, a], [, b]) => a - b);
  // fromEntries defines own properties, so a lane named __proto__ is a key like any other.
  return Object.fromEntries(soonestFirst.map(([lane, at]) => [lane, new Date(at)]));
}
