import { InvalidQueueNameError } from '../errors';

/**
 * Queue names become part of every key (`<prefix>:{name}:...`), inside the cluster
 * hashtag. Braces would move the hashtag, a colon would blur the grammar, and
 * whitespace or control characters make keys unreadable in redis-cli, so the
 * alphabet is deliberately small.
 */
const QUEUE_NAME = /^[A-Za-z0-9._-]{1,64}$/;

export function isValidQueueName(candidate: unknown): candidate is string {
  return typeof candidate === 'string' && QUEUE_NAME.test(candidate);
}

export function assertQueueName(candidate: unknown): string {
  if (!isValidQueueName(candidate)) throw new InvalidQueueNameError(candidate);
  return candidate;
}
