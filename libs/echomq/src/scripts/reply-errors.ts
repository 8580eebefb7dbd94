import {
  EchoMqError,
  InvalidArgumentError,
  JobExistsError,
  JobNotFoundError,
  JobStateError,
  StaleJobError,
} from '../errors';

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
