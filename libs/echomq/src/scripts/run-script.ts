import { InvalidArgumentError, OutcomeUnknownError, RedisUnavailableError } from '../errors';
import type { ScriptContext } from './context';
import type { RedisClient, ScriptName } from './registry';
import { typedOutOfMemory } from './reply-errors';
import { sendScript } from './script-command';
import { monotonicMs } from '../monotonic';

/**
 * How long a script refused by Redis Cluster while its slot migrates (TRYAGAIN, or ioredis
 * giving up after its own redirections) is repeated before the caller is told. A refused
 * script ran nothing, so repeating it is always safe.
 */
const MIGRATION_WAIT_MS = 30_000;
const MIGRATION_BACKOFF_MAX_MS = 500;

/** Redis Cluster refused the call without running it: the slot is moving. */
function refusedDuringMigration(error: unknown): boolean {
  const message = error instanceof Error ? error.message : '';
  return /^TRYAGAIN|Too many Cluster redirections|^ASK /.test(message);
}

/**
 * Errors every wrapper means the same way: ioredis's own timeout (the cluster's node
 * connections) is a missed deadline, a script's EMQ_BAD_ARG (refused before any write) is an
 * invalid argument, and a full Redis's refusal (before the script's first write: nothing was
 * written) is RedisOutOfMemoryError. Other EMQ_ refusals are left for the wrapper, which
 * knows the job.
 */
function typed(error: unknown, name: string, redis: RedisClient): unknown {
  if (!(error instanceof Error)) return error;
  if (error.message === 'Command timed out') {
    return new OutcomeUnknownError(name, 'no reply within the command deadline');
  }
  if (/^(?:ERR )?EMQ_BAD_ARG/.test(error.message)) {
    return new InvalidArgumentError(
      `${name} refused its arguments before writing anything: ${error.message}`,
    );
  }
  // A replica (a master demoted in a failover) refused the script's first write; scripts
  // check everything before that write, so nothing was written and a repeat is safe.
  if (/^READONLY\b/.test(error.message)) {
    return new RedisUnavailableError(
      'the master',
      0,
      `${name} reached a replica, not the master (${error.message.split('\n')[0]}): nothing was written; ` +
        'a repeat reaches the master once the connection follows the failover',
    );
  }
  return typedOutOfMemory(error, redis, name);
}

/**
 * Runs one transition script: the only way wrappers reach Redis. Script refusals (EMQ_*
 * replies) are left for the wrapper to translate; connection failures arrive typed
 * (OutcomeUnknownError, RedisUnavailableError); a cluster migration delays the call. The call
 * is written by sendScript, which costs this process far less per value than ioredis's own
 * script commands (a merged enqueue sends 12 values per job).
 */
export async function runScript(
  ctx: ScriptContext,
  name: ScriptName,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  const started = monotonicMs();
  for (let attempt = 1; ; attempt++) {
    try {
      return await sendScript(ctx.redis, name, keys, args);
    } catch (error) {
      if (!refusedDuringMigration(error)) throw typed(error, name, ctx.redis);
      const waited = monotonicMs() - started;
      if (waited >= MIGRATION_WAIT_MS) {
        throw new RedisUnavailableError(`the slot of queue ${ctx.keys.queue} (migrating)`, waited);
      }
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(MIGRATION_BACKOFF_MAX_MS, 10 * 2 ** attempt)),
      );
    }
  }
}
