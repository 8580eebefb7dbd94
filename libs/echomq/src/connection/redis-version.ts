import type { Logger } from '@nestjs/common';
import { RedisVersionError } from '../errors';
import type { RedisClient } from '../scripts';
import { ConnectionCheck, isServerRefusal } from './connection-check';

/**
 * The oldest Redis that runs every command EchoMQ sends: `ZADD ... XX GT` (the heartbeat's
 * extend) and `ZRANGE ... BYLEX REV LIMIT` (browsing pending and dead) both came in 6.2.0.
 * An older server would fail those calls with a syntax error, long after boot.
 */
export const MIN_REDIS_VERSION = '6.2.0';

/** `redis_version` from an INFO reply, or undefined when the reply has none. */
export function parseRedisVersion(info: string): string | undefined {
  return /^redis_version:([^\r\n]+)/m.exec(info)?.[1]?.trim();
}

/** Whether `version` is older than `minimum`, comparing dotted numbers (`6.0.20` < `6.2.0`). */
export function isOlderVersion(version: string, minimum: string): boolean {
  const have = version.split('.').map((part) => Number.parseInt(part, 10) || 0);
  const need = minimum.split('.').map((part) => Number.parseInt(part, 10) || 0);
  for (let i = 0; i < need.length; i++) {
    const diff = (have[i] ?? 0) - need[i];
    if (diff !== 0) return diff < 0;
  }
  return false;
}

/**
 * Checks that the server is new enough (MIN_REDIS_VERSION) on every connection the client
 * makes, as soon as it is up (see ConnectionCheck). QueueService awaits the verdict before it
 * first uses a queue, so a Redis that is too old stops a worker's boot and fails enqueue with
 * RedisVersionError, having written nothing. A server that refuses INFO (some managed
 * services, an ACL without it) is not refused: the check is skipped with one debug line. On a
 * cluster every master is checked.
 */
export class RedisVersionCheck extends ConnectionCheck {
  constructor(
    client: RedisClient,
    private readonly logger: Pick<Logger, 'debug' | 'error'>,
    private readonly minimum = MIN_REDIS_VERSION,
  ) {
    super(client);
  }

  protected refuses(error: unknown): boolean {
    return error instanceof RedisVersionError;
  }

  protected async checkNode(node: RedisClient, target: string): Promise<void> {
    let info: string;
    try {
      info = await node.info('server');
    } catch (error) {
      if (!isServerRefusal(error)) throw error;
      this.logger.debug(
        `Redis at ${target} refuses INFO (${(error as Error).message}); version check skipped`,
      );
      return;
    }
    const version = parseRedisVersion(info);
    if (version === undefined) {
      this.logger.debug(`Redis at ${target} reports no redis_version; version check skipped`);
      return;
    }
    if (isOlderVersion(version, this.minimum)) {
      const refusal = new RedisVersionError(target, version, this.minimum);
      this.logger.error(refusal.message);
      throw refusal;
    }
  }
}
