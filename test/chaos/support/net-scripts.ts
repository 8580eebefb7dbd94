import { createHash } from 'node:crypto';
import { SCRIPTS, type ScriptName } from '@app/echomq/internal';

/**
 * Which EchoMQ transition a request on the wire runs. ioredis sends a defined script as
 * EVALSHA with the SHA1 of its Lua text, so the fault proxy can lose the reply to one kind of
 * call (a claim, a completion, an enqueue) and leave every other reply alone.
 */
const BY_SHA = new Map<string, ScriptName>(
  Object.entries(SCRIPTS).map(([name, script]) => [
    createHash('sha1').update(script.lua).digest('hex'),
    name as ScriptName,
  ]),
);

/** The script an EVALSHA (or EVAL, after a NOSCRIPT) request runs; undefined for any other command. */
export function scriptOf(command: readonly string[]): ScriptName | undefined {
  const verb = command[0]?.toLowerCase();
  if (verb === 'evalsha') return BY_SHA.get(command[1]?.toLowerCase() ?? '');
  if (verb === 'eval')
    return BY_SHA.get(
      createHash('sha1')
        .update(command[1] ?? '')
        .digest('hex'),
    );
  return undefined;
}
