import { RedisCommandRefusedError } from '../redis-errors';

/** The feature a refused confirmation belongs to, as errors and logs name it. */
export const DURABLE_FEATURE = 'the module option durable';

/** ioredis puts the command a reply answers on its ReplyError. */
interface ReplyErrorLike extends Error {
  readonly command?: { readonly name?: unknown };
}

/**
 * A reply that no repeat can change: the user may not run the command (ACL `NOPERM`), or the
 * server does not know it (renamed away, a proxy that does not pass it). Anything else (a
 * replica answering, a lost connection) is not one and is left to its caller.
 */
function isPermanent(message: string): boolean {
  return /^NOPERM\b/.test(message) || /^ERR unknown command\b/i.test(message);
}

/**
 * The right that would allow what Redis refused, read from its own reply when it names the
 * command ("no permissions to run the 'wait' command"), else from the command sent; a refused
 * key is the key pattern of the user's line.
 */
function rightOf(message: string, command: string): string {
  if (/access one of the keys/.test(message)) return 'its key pattern (~<prefix>:*)';
  const named = /run the '([a-z|-]+)' command/i.exec(message);
  return `+${(named?.[1] ?? command).toLowerCase()}`;
}

/**
 * A reply to a durable write's confirmation (its small write, or WAIT) as the permanent
 * refusal it may be: RedisCommandRefusedError naming the missing right, or undefined when
 * the reply is something a later try can change.
 */
export function confirmationRefusal(
  error: Error | null | undefined,
  target: string,
): RedisCommandRefusedError | undefined {
  if (!error || !isPermanent(error.message)) return undefined;
  const sent = (error as ReplyErrorLike).command?.name;
  const command = typeof sent === 'string' ? sent.toUpperCase() : 'WAIT';
  return new RedisCommandRefusedError(
    target,
    command,
    rightOf(error.message, command),
    DURABLE_FEATURE,
    error.message.split('\n')[0].slice(0, 200),
  );
}
