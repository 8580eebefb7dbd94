import { InvalidArgumentError, InvalidOptionError } from '../errors';
import { assertBackoff, type BackoffPolicy } from '../queue/queue-options';

/**
 * The delay before the next attempt, after `attempt` attempts of the current budget
 * failed (1 after the first failure). Exponential doubles from delayMs, capped, with
 * a share of each delay drawn at random so a burst of failures does not retry in lockstep.
 */
export function backoffDelay(
  policy: BackoffPolicy,
  attempt: number,
  error: unknown,
  random: () => number = Math.random,
): number {
  switch (policy.type) {
    case 'fixed':
      return Math.max(0, policy.delayMs);
    case 'exponential': {
      const cap = policy.maxDelayMs ?? 3_600_000;
      const jitter = Math.min(1, Math.max(0, policy.jitter ?? 0.5));
      const base = Math.min(cap, policy.delayMs * 2 ** Math.max(0, attempt - 1));
      return Math.round(base * (1 - jitter) + base * jitter * random());
    }
    case 'custom': {
      const delay = policy.delay(attempt, error);
      return Number.isFinite(delay) && delay > 0 ? Math.round(delay) : 0;
    }
  }
}

/**
 * Checks a policy on its own, outside configuration. Configured policies are checked
 * at boot with the option's name (assertQueueOptions, InvalidOptionError); this keeps
 * the same rules and its historical InvalidArgumentError.
 */
export function assertBackoffPolicy(policy: BackoffPolicy): BackoffPolicy {
  try {
    return assertBackoff(policy, 'backoff');
  } catch (error) {
    if (error instanceof InvalidOptionError) throw new InvalidArgumentError(error.message);
    throw error;
  }
}

/**
 * A job's own policy as its row keeps it (JSON, see EnqueueOptions.backoff), checked again
 * with the same ranges: a row is data another process wrote, and only a fixed or exponential
 * policy can be stored. Throws InvalidArgumentError for anything else.
 */
export function storedBackoff(json: string): BackoffPolicy {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new InvalidArgumentError(`the job's stored backoff is not JSON: ${json.slice(0, 80)}`);
  }
  const policy = assertBackoffPolicy(value as BackoffPolicy);
  if (policy.type === 'custom') throw new InvalidArgumentError("a job's stored backoff cannot be custom");
  return policy;
}
