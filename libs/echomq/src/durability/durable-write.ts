import { setTimeout as sleep } from 'node:timers/promises';
import { isTransientRedisError, OutcomeUnknownError } from '../errors';
import { RedisCommandRefusedError } from '../redis-errors';
import type { ReplicaWait } from './replica-confirmer';
import { monotonicMs } from '../monotonic';

const REPEAT_FIRST_MS = 50;
const REPEAT_MAX_MS = 2_000;
/**
 * Runs of one write whose reply record is then missing from the master. Once is a failover that
 * lost the write after its reply; more is a command connection and a confirmation connection
 * that reach two different masters while one is being replaced.
 */
const RUNS_MAX = 3;

/**
 * What the master says of a write call, found by its reply record: on it or not, and how many
 * replicas have it; `unknown` when the confirmation could not be made in time.
 */
export type ReplicaCheck =
  | { readonly state: 'present'; readonly acknowledged: number }
  | { readonly state: 'absent' }
  | { readonly state: 'unknown'; readonly error: Error };

/**
 * One confirmation of a write call by its reply record: PEXPIRE renews the record's replay
 * window (a write that propagates, so WAIT has something to wait for) and says whether the
 * record, and so the call's writes (the same script), are on this master.
 */
export async function checkReplicated(
  wait: ReplicaWait,
  replyKey: string,
  ttlMs: number,
): Promise<ReplicaCheck> {
  try {
    const { reply, acknowledged } = await wait.confirm((pipeline) => pipeline.pexpire(replyKey, ttlMs));
    return Number(reply) === 1 ? { state: 'present', acknowledged } : { state: 'absent' };
  } catch (error) {
    if (!isTransientRedisError(error)) throw error;
    return { state: 'unknown', error };
  }
}

/**
 * checkReplicated, asked again while the answer is unknown (the confirmation connection is
 * reconnecting, as in a failover) until `untilMs`. A write not found is looked for once more
 * on a fresh connection: the one asked may still be on a master the sentinels replaced.
 */
export async function checkReplicatedUntil(
  wait: ReplicaWait,
  replyKey: string,
  ttlMs: number,
  untilMs: number,
  stopped?: AbortSignal,
): Promise<ReplicaCheck> {
  let reconnected = false;
  for (let attempt = 1; ; attempt++) {
    const check = await checkReplicated(wait, replyKey, ttlMs);
    if (check.state === 'absent' && !reconnected) {
      reconnected = true;
      wait.reconnect();
      continue;
    }
    if (check.state !== 'unknown' || monotonicMs() >= untilMs || stopped?.aborted) return check;
    const delay = Math.min(REPEAT_MAX_MS, REPEAT_FIRST_MS * 2 ** attempt, untilMs - monotonicMs());
    await sleep(Math.max(0, delay), undefined, { signal: stopped }).catch(() => undefined);
  }
}

/**
 * A write call (repeated under its request id by `write` itself while its reply is lost),
 * then its confirmation. A call whose record is not on the master (written on a master that
 * failed before its replicas had it) is run again under the same request id, which writes it
 * on the new master. Resolves with the last run's result and how many replicas confirmed it
 * (0 when the confirmation could not be made by `untilMs`).
 *
 * A confirmation Redis refuses for good (a user without `+wait`, see confirmationRefusal) ends
 * it at once: `refused` turns the result written and the refusal into the caller's answer
 * (naming its jobs); without it the refusal is thrown, marked as after a write.
 */
export async function replicatedWrite<T>(
  wait: ReplicaWait,
  replyKey: string,
  ttlMs: number,
  write: () => Promise<T>,
  untilMs: number,
  refused?: (result: T, refusal: RedisCommandRefusedError) => T,
): Promise<{ readonly result: T; readonly acknowledged: number }> {
  for (let runs = 1; ; runs++) {
    const result = await write();
    let check: ReplicaCheck;
    try {
      check = await checkReplicatedUntil(wait, replyKey, ttlMs, untilMs);
    } catch (error) {
      if (!(error instanceof RedisCommandRefusedError)) throw error;
      if (!refused) throw error.afterWrite([]);
      return { result: refused(result, error), acknowledged: 0 };
    }
    if (check.state === 'present') return { result, acknowledged: check.acknowledged };
    if (check.state === 'unknown') return { result, acknowledged: 0 };
    if (runs >= RUNS_MAX || monotonicMs() >= untilMs) {
      throw new OutcomeUnknownError(
        'a durable write',
        `its record was not on the master after ${runs} runs, a failover is under way`,
      );
    }
  }
}
