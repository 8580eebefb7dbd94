import { isTransientRedisError, OutcomeUnknownError, RedisUnavailableError } from '../errors';
import { monotonicMs } from '../monotonic';
import { RedisCommandRefusedError } from '../redis-errors';
import { repeatUntilKnown } from '../scripts/repeat';
import { ConfirmationRedirectedError } from './confirm-redirect';
import { DurableWriteUnknownError } from './durable-errors';
import { ConfirmerClosedError, type ConfirmBound, type ReplicaWait } from './replica-confirmer';

/**
 * Runs of one write whose reply record is then missing from the master. Once is a failover that
 * lost the write after its reply; more is a command connection and a confirmation connection
 * that reach two different masters while one is being replaced.
 */
const RUNS_MAX = 3;

/**
 * What the master says of a write call, found by its reply record: on it or not, and how many
 * replicas have it; `unknown` when no confirmation could be made (`reason` says why; `final`
 * when asking again cannot help: the confirmer was closed at shutdown).
 */
export type ReplicaCheck =
  | { readonly state: 'present'; readonly acknowledged: number }
  | { readonly state: 'absent' }
  | {
      readonly state: 'unknown';
      readonly reason: string;
      readonly final: boolean;
      /** The last try reached the master, which did not serve the key's slot (a cluster redirect). */
      readonly redirected?: boolean;
    };

/** What a durable write call came to: its result, and what its confirmation found. */
export type DurableOutcome<T> = { readonly result: T } & (
  | { readonly state: 'confirmed'; readonly acknowledged: number }
  | { readonly state: 'unconfirmed'; readonly reason: string }
  | { readonly state: 'refused'; readonly refusal: RedisCommandRefusedError }
);

/** The confirmation was cut by the application's shutdown. */
const SHUTTING_DOWN = 'the application is shutting down';

/**
 * One confirmation of a write call by its reply record: PEXPIRE renews the record's replay
 * window (a write that propagates, so WAIT has something to wait for) and says whether the
 * record, and so the call's writes (the same script), are on this master. Throws what a later
 * try may change (OutcomeUnknownError, RedisUnavailableError) and what none can (a refusal).
 */
async function checkOnce(
  wait: ReplicaWait,
  replyKey: string,
  ttlMs: number,
  bound: ConfirmBound | undefined,
): Promise<ReplicaCheck> {
  try {
    const { reply, acknowledged } = await wait.confirm(
      { key: replyKey, append: (pipeline) => pipeline.pexpire(replyKey, ttlMs) },
      bound,
    );
    return Number(reply) === 1 ? { state: 'present', acknowledged } : { state: 'absent' };
  } catch (error) {
    if (error instanceof ConfirmerClosedError)
      return { state: 'unknown', reason: SHUTTING_DOWN, final: true };
    throw error;
  }
}

/**
 * The confirmation, asked again while its answer is unknown (the confirmation connection is
 * reconnecting, as in a failover; a cluster did not run it because its slot moved, or is being
 * migrated and its record moved already: it then waits for the migration to end and runs on the
 * new master) until `untilMs` or `bound`'s signal (see repeatUntilKnown). `bound` also caps each try (a claim's
 * cut-off). A write not found is looked for once more on a fresh connection: the one asked may
 * still be on a master the sentinels replaced.
 */
export async function checkReplicatedUntil(
  wait: ReplicaWait,
  replyKey: string,
  ttlMs: number,
  untilMs: number,
  bound?: ConfirmBound,
): Promise<ReplicaCheck> {
  let reconnected = false;
  const once = async (): Promise<ReplicaCheck> => {
    const check = await checkOnce(wait, replyKey, ttlMs, bound);
    if (check.state !== 'absent' || reconnected) return check;
    reconnected = true;
    wait.reconnect(replyKey);
    return checkOnce(wait, replyKey, ttlMs, bound);
  };
  try {
    return await repeatUntilKnown(once, { untilMs, stopped: () => bound?.signal?.aborted === true });
  } catch (error) {
    if (!isTransientRedisError(error)) throw error;
    const redirected = error instanceof ConfirmationRedirectedError;
    return {
      state: 'unknown',
      reason: whyUnknown(error),
      final: false,
      ...(redirected ? { redirected } : {}),
    };
  }
}

/** A transient error as a reason, without the advice its own message gives a caller of the call itself. */
function whyUnknown(error: OutcomeUnknownError | RedisUnavailableError): string {
  if (error instanceof OutcomeUnknownError) return `no reply to ${error.command}: ${error.reason}`;
  if (error instanceof ConfirmationRedirectedError) return error.reason;
  return `Redis at ${error.target} was not reachable`;
}

/**
 * A write call (repeated under its request id by `write` itself while its reply is lost),
 * then its confirmation. A call whose record is not on the master (written on a master that
 * failed before its replicas had it) is run again under the same request id, which writes it
 * on the new master; after RUNS_MAX runs, DurableWriteUnknownError. Otherwise resolves with the
 * last run's result and what its confirmation found:
 *
 * - `confirmed`: WAIT counted `acknowledged` replicas (perhaps fewer than required);
 * - `unconfirmed`: no confirmation could be made by `untilMs`, or the application is closing;
 * - `refused`: Redis refuses the confirmation for good (a user without `+wait`, see
 *   confirmationRefusal), answered at once.
 */
export async function replicatedWrite<T>(
  wait: ReplicaWait,
  replyKey: string,
  ttlMs: number,
  write: () => Promise<T>,
  untilMs: number,
): Promise<DurableOutcome<T>> {
  for (let runs = 1; ; runs++) {
    const result = await write();
    let check: ReplicaCheck;
    try {
      check = await checkReplicatedUntil(wait, replyKey, ttlMs, untilMs);
    } catch (error) {
      if (!(error instanceof RedisCommandRefusedError)) throw error;
      return { result, state: 'refused', refusal: error };
    }
    if (check.state === 'present') return { result, state: 'confirmed', acknowledged: check.acknowledged };
    if (check.state === 'unknown') {
      const unanswered = check.redirected
        ? 'the cluster did not run the confirmation'
        : 'the confirmation connection did not answer';
      const reason = check.final
        ? check.reason
        : `${unanswered} before the call's repeat window ended: ${check.reason}`;
      return { result, state: 'unconfirmed', reason };
    }
    if (runs >= RUNS_MAX || monotonicMs() >= untilMs) throw new DurableWriteUnknownError(runs);
  }
}
