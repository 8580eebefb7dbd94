import type { ScriptContext } from '@app/echomq/internal';

/**
 * A context whose calls of one script first run `before(call)` (call = 0, 1, ...): a test's
 * way to act between the chunks of a bulk operation (a producer, a worker) at a known point,
 * with no timing involved. `args` are the call's keys then arguments, as sent.
 */
export function beforeEachCall(
  ctx: ScriptContext,
  script: string,
  before: (call: number, args: readonly unknown[]) => Promise<void> | void,
): ScriptContext {
  let calls = 0;
  const target = ctx.redis as unknown as Record<string | symbol, unknown>;
  const hooked = new Proxy(target, {
    get(on, prop) {
      const value: unknown = Reflect.get(on, prop, on);
      if (typeof value !== 'function') return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (prop !== script) return fn.bind(on);
      return async (...args: unknown[]) => {
        await before(calls++, args);
        return fn.apply(on, args);
      };
    },
  });
  return { ...ctx, redis: hooked as unknown as ScriptContext['redis'] };
}
