import { describeValue, InvalidArgumentError } from '../errors';

/**
 * The first segment of every key (`<prefix>:{q}:pending`, `<prefix>:queues`, ...), so that
 * two applications or environments can share one Redis and an ACL can scope each to
 * `~<prefix>:*`. No braces (they would move the cluster hashtag off the queue name), no
 * colon (the prefix ends at the first one, so `a` and `a:b` can never overlap), and no
 * glob characters, so the prefix can be written into an ACL key pattern as it is.
 */
export const DEFAULT_KEY_PREFIX = 'emq';

export const KEY_PREFIX_MAX = 32;

const KEY_PREFIX = /^[A-Za-z0-9._-]{1,32}$/;

/** What a key prefix may be, for error messages. */
export const KEY_PREFIX_RULE = `1 to ${KEY_PREFIX_MAX} characters from A-Z a-z 0-9 . _ -`;

export function isValidKeyPrefix(candidate: unknown): candidate is string {
  return typeof candidate === 'string' && KEY_PREFIX.test(candidate);
}

export function assertKeyPrefix(candidate: unknown): string {
  if (!isValidKeyPrefix(candidate)) {
    throw new InvalidArgumentError(`Invalid key prefix ${describeValue(candidate)}: use ${KEY_PREFIX_RULE}`);
  }
  return candidate;
}
