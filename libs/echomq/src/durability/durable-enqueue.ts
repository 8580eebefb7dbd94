import type { EchoMqError } from '../errors';
import { NotReplicatedError } from '../redis-errors';
import { replayWindow, type ScriptContext } from '../scripts';
import { UnconfirmedWriteError } from './durable-errors';
import { replicatedWrite, type DurableOutcome } from './durable-write';
import type { ReplicaWait } from './replica-confirmer';

/** The error for jobs `ids` of a durable enqueue that was written but not confirmed. */
export type UnconfirmedJobs = (ids: readonly string[]) => EchoMqError;

/**
 * An enqueue call made durable: `write` (the script call under `requestId`, repeated by itself
 * while its reply is lost, until `untilMs`), then its confirmation (see replicatedWrite).
 * Resolves with the write's result once enough replicas have it. Otherwise the result is
 * handed to `unconfirmed` with the error that names a part of its jobs, so each caller of a
 * merged call hears of its own jobs (a call that throws it rejects as a whole):
 *
 * - fewer replicas than required counted: NotReplicatedError;
 * - no confirmation could be made (the connection down until `untilMs`, the application
 *   closing): UnconfirmedWriteError, which says why;
 * - the confirmation refused for good (a user without `+wait`): RedisCommandRefusedError,
 *   marked as after a write.
 */
export async function durableEnqueue<T>(
  ctx: ScriptContext,
  durability: ReplicaWait,
  requestId: string,
  write: () => Promise<T>,
  untilMs: number,
  unconfirmed: (result: T, errorFor: UnconfirmedJobs) => T,
): Promise<T> {
  const outcome = await replicatedWrite(
    durability,
    ctx.keys.reply(requestId),
    replayWindow(ctx),
    write,
    untilMs,
  );
  if (outcome.state === 'confirmed' && outcome.acknowledged >= durability.replicas) return outcome.result;
  return unconfirmed(outcome.result, (ids) => errorFor(durability, outcome, ids));
}

function errorFor(
  durability: ReplicaWait,
  outcome: DurableOutcome<unknown>,
  ids: readonly string[],
): EchoMqError {
  switch (outcome.state) {
    case 'refused':
      return outcome.refusal.afterWrite(ids);
    case 'unconfirmed':
      return new UnconfirmedWriteError(durability.replicas, durability.timeoutMs, ids, outcome.reason);
    case 'confirmed':
      return new NotReplicatedError(outcome.acknowledged, durability.replicas, durability.timeoutMs, ids);
  }
}
