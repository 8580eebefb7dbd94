import { describeValue, InvalidArgumentError } from '../errors';

/**
 * Lanes split a queue's pending work between tenants (or any key) that are served fairly.
 * A lane's name becomes part of its keys (`<p>:{q}:pending:<level>:<lane>`), after the
 * queue's hashtag, so braces are harmless there; the alphabet still leaves out whitespace,
 * control characters and braces so keys stay readable in redis-cli. Tenant ids, UUIDs and
 * e-mail addresses fit.
 */
const LANE_NAME = /^[A-Za-z0-9_.:@+=-]{1,64}$/;

/** The lane of every job enqueued without one; it behaves as the queue did before lanes. */
export const DEFAULT_LANE = 'default';

/** Priority levels: 0 (the default, claimed last) to 9 (claimed first). */
export const PRIORITY_MIN = 0;
export const PRIORITY_MAX = 9;
export const DEFAULT_PRIORITY = 0;

export function isValidLaneName(candidate: unknown): candidate is string {
  return typeof candidate === 'string' && LANE_NAME.test(candidate);
}

/** `what` names the value in the message: `lane`, or its path in a call (`jobs[3].lane`). */
export function assertLaneName(candidate: unknown, what = 'lane'): string {
  if (!isValidLaneName(candidate)) {
    throw new InvalidArgumentError(
      `${what} must be 1 to 64 characters from A-Z a-z 0-9 _ . : @ + = -, got ${describeValue(candidate)}`,
    );
  }
  return candidate;
}

export function assertPriority(candidate: unknown, what = 'priority'): number {
  if (
    typeof candidate !== 'number' ||
    !Number.isInteger(candidate) ||
    candidate < PRIORITY_MIN ||
    candidate > PRIORITY_MAX
  ) {
    throw new InvalidArgumentError(
      `${what} must be an integer from ${PRIORITY_MIN} to ${PRIORITY_MAX}, got ${describeValue(candidate)}`,
    );
  }
  return candidate;
}
