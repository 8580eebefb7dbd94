import { createHash } from 'node:crypto';
import { SCRIPTS, type ScriptContext } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { beforeEachCall } from './intercept';

/** SLOWLOG keeps calls slower than this (µs); a call not logged took less. */
export const LOGGED_OVER_US = 500;
/** "No single script call over about 10 ms" (the bound), on the 99th percentile of calls. */
export const TYPICAL_US = 10_000;
/** Twice that for the slowest single call, so a loaded machine does not fail it. */
export const HARD_CAP_US = 20_000;

export type ScriptName = keyof typeof SCRIPTS;
type Entry = [number, number, number, string[]];

/** Has SLOWLOG keep every call over LOGGED_OVER_US; returns the config to restore after. */
export async function logSlowCalls(redis: Redis): Promise<string[]> {
  const saved = (await redis.config('GET', 'slowlog-*')) as string[];
  await redis.config('SET', 'slowlog-log-slower-than', String(LOGGED_OVER_US));
  await redis.config('SET', 'slowlog-max-len', '100000');
  return saved;
}

export interface CallTimes {
  readonly calls: number;
  readonly p99Us: number;
  readonly slowestUs: number;
}

/**
 * Runs a bulk operation on a context that counts its calls of one script, then reads their run
 * times from SLOWLOG (Redis's own measure), kept only for that script on this queue's keys.
 */
export async function callTimes(
  redis: Redis,
  ctx: ScriptContext,
  script: ScriptName,
  run: (counted: ScriptContext) => Promise<unknown>,
): Promise<CallTimes> {
  let calls = 0;
  const counting = beforeEachCall(ctx, script, () => {
    calls++;
  });
  const since = Math.floor(Date.now() / 1000) - 1;
  await run(counting);
  const sha = createHash('sha1').update(SCRIPTS[script].lua).digest('hex');
  const entries = (await redis.call('SLOWLOG', 'GET', '100000')) as Entry[];
  const logged = entries
    .filter(
      ([, at, , args]) =>
        at >= since && args[1] === sha && args.some((arg) => String(arg).includes(`{${ctx.keys.queue}}`)),
    )
    .map(([, , us]) => us)
    .sort((a, b) => b - a);
  return { calls, p99Us: logged[Math.floor(calls / 100)] ?? 0, slowestUs: logged[0] ?? 0 };
}
