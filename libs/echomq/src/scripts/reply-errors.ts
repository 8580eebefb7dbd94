import { Cluster } from 'ioredis';
import {
  EchoMqError,
  InvalidArgumentError,
  JobExistsError,
  JobNotFoundError,
  JobStateError,
  StaleJobError,
} from '../errors';
import { RedisOutOfMemoryError } from '../redis-errors';
import type { RedisClient } from './registry';

/**
 * Scripts report refusals as error replies with an `EMQ_` code; this turns them into
 * typed errors. Anything else (a connection error, a Lua bug) is rethrown untouched.
 */
export function translateReplyError(error: unknown, id: string, attempt = 0): never {
  const message = error instanceof Error ? error.message : '';
  // Redis may prefix the reply with a generic error code ("ERR EMQ_STALE").
  const match = /^(?:ERR )?EMQ_([A-Z]+(?:_[A-Z]+)*)(?: (\S+))?/.exec(message);
  if (!match) throw error;
  switch (match[1]) {
    case 'STALE':
      throw new StaleJobError(id, attempt);
    case 'EXISTS':
      throw new JobExistsError(match[2] ?? id);
    case 'NOT_FOUND':
      throw new JobNotFoundError(id);
    case 'NOT_DEAD':
      throw new JobStateError(id, 'dead');
    case 'BAD_ARG':
      // A script refused its arguments before writing anything (a bug or a version skew).
      throw new InvalidArgumentError(`Redis refused the call's arguments: ${message}`);
    default:
      throw new EchoMqError(match[1], message);
  }
}

/**
 * Whether Redis refused a command because it is at its `maxmemory` with `noeviction`. A plain
 * command's reply starts with OOM; Redis 6.2 wraps a script's refusal in its own error text
 * ("ERR Error running script ... -OOM command not allowed ..."), Redis 7 does not. A full
 * Redis refuses every command queued in a MULTI, reads too: ioredis then reports EXECABORT,
 * with the refusals as its previousErrors.
 */
export function isOutOfMemoryReply(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof RedisOutOfMemoryError) return true;
  if (/(?:^|-)OOM command not allowed/.test(error.message)) return true;
  const previous = (error as { previousErrors?: unknown }).previousErrors;
  return Array.isArray(previous) && previous.some(isOutOfMemoryReply);
}

/** How errors name the Redis a client talks to: host:port or socket path, never credentials. */
export function redisTarget(client: RedisClient): string {
  if (client instanceof Cluster) return 'the cluster';
  const target = (client as RedisClient & { target?: unknown }).target;
  if (typeof target === 'string') return target;
  const { host, port, path } = client.options;
  return path ?? `${host ?? 'localhost'}:${port ?? 6379}`;
}

/**
 * A full Redis's refusal of `command` as RedisOutOfMemoryError (other errors as they are).
 * Redis refuses a command, or a script's first growing write, before it changes anything, so
 * the refused call wrote nothing.
 */
export function typedOutOfMemory(error: unknown, client: RedisClient, command: string): unknown {
  if (error instanceof RedisOutOfMemoryError || !isOutOfMemoryReply(error)) return error;
  return new RedisOutOfMemoryError(redisTarget(client), command);
}
