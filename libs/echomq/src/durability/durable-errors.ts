import { OutcomeUnknownError } from '../errors';
import { NotReplicatedError } from '../redis-errors';

/**
 * A durable write that is on the master, whose replication could not be checked at all: no
 * WAIT ran to its timeout (the confirmation connection failed until the call's repeat window
 * ended, or the application closed it at shutdown). A NotReplicatedError (NOT_REPLICATED, its
 * `ids` the jobs written, `acknowledged` 0) whose message says why instead of blaming the
 * replicas, which may well have the write.
 */
export class UnconfirmedWriteError extends NotReplicatedError {
  constructor(
    required: number,
    timeoutMs: number,
    ids: readonly string[],
    /** Why no confirmation could be made. */
    readonly reason: string,
  ) {
    super(0, required, timeoutMs, ids);
    this.message =
      `The write is on the master, but whether ${required} replica(s) have it could not be checked ` +
      `(${reason}): it may be lost in a failover`;
  }
}

/**
 * A durable write whose reply record was missing from the master after every run (a failover
 * under way while command and confirmation connections reach different masters): it may or may
 * not have taken effect. An OutcomeUnknownError (OUTCOME_UNKNOWN) whose message does not call
 * a repeat safe: a repeated enqueue mints new ids, so only one with an idempotency key is.
 */
export class DurableWriteUnknownError extends OutcomeUnknownError {
  constructor(readonly runs: number) {
    super('a durable write', `its record was not on the master after ${runs} runs, a failover is under way`);
    this.message =
      `A durable write was not found on the master after ${runs} runs (a failover is under way): it may ` +
      'or may not have taken effect. Repeat an enqueue with the same idempotency key, which cannot ' +
      'enqueue it twice';
  }
}
