import { createHash } from 'node:crypto';
import { SCRIPTS, type ScriptContext, type ScriptName } from '@app/echomq/internal';

/**
 * A context whose calls of one script first run `before(call)` (call = 0, 1, ...): a test's
 * way to act between the chunks of a bulk operation (a producer, a worker) at a known point,
 * with no timing involved. `args` are the call's keys then arguments, as sent.
 *
 * Scripts reach Redis as EVAL or EVALSHA commands written by the library itself (sendScript),
 * so the call is recognised on the client's sendCommand by its script text or SHA1; the
 * script's own command (a client with ioredis's keyPrefix) is intercepted too.
 */
export function beforeEachCall(
  ctx: ScriptContext,
  script: string,
  before: (call: number, args: readonly unknown[]) => Promise<void> | void,
): ScriptContext {
  let calls = 0;
  const lua = SCRIPTS[script as ScriptName].lua;
  const sha = createHash('sha1').update(lua).digest('hex');
  const target = ctx.redis as unknown as Record<string | symbol, unknown>;
  const hooked = new Proxy(target, {
    get(on, prop) {
      const value: unknown = Reflect.get(on, prop, on);
      if (typeof value !== 'function') return value;
      const fn = value as (...args: unknown[]) => unknown;
      if (prop === 'sendCommand') {
        return async (command: { name?: string; args?: unknown[] }, ...rest: unknown[]) => {
          const isScript = command.name === 'eval' || command.name === 'evalsha';
          if (isScript && (command.args?.[0] === sha || command.args?.[0] === lua)) {
            await before(calls++, command.args.slice(2));
          }
          return fn.apply(on, [command, ...rest]);
        };
      }
      if (prop !== script) return fn.bind(on);
      return async (...args: unknown[]) => {
        await before(calls++, args);
        return fn.apply(on, args);
      };
    },
  });
  return { ...ctx, redis: hooked as unknown as ScriptContext['redis'] };
}
