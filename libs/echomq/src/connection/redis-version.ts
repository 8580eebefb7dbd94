import type { Logger } from '@nestjs/common';
import { Cluster, type Redis } from 'ioredis';
import { RedisVersionError } from '../errors';
import type { RedisClient } from '../scripts';

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

/** An error reply from the server itself (NOPERM, unknown command), as opposed to a lost connection. */
function isServerRefusal(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}

function describeNode(node: Redis): string {
  const target = (node as Redis & { target?: unknown }).target;
  if (typeof target === 'string') return target;
  const { host, port, path } = node.options;
  return path ?? `${host ?? 'localhost'}:${port ?? 6379}`;
}

/**
 * Checks that the server is new enough (MIN_REDIS_VERSION) on every connection the client
 * makes, as soon as it is up: a reconnect may reach another server (a failover, a restart on
 * another binary). QueueService awaits the verdict before it first uses a queue, so a Redis
 * that is too old stops a worker's boot and fails enqueue with RedisVersionError, having
 * written nothing. A server that refuses INFO (some managed services, an ACL without it)
 * is not refused: the check is skipped with one debug line. On a cluster every master is
 * checked.
 */
export class RedisVersionCheck {
  private verdict?: Promise<void>;
  /** A check asked for before the connection was up: the 'ready' that follows sends it. */
  private awaitingReady = false;

  constructor(
    private readonly client: RedisClient,
    private readonly logger: Pick<Logger, 'debug' | 'error'>,
    private readonly minimum = MIN_REDIS_VERSION,
  ) {
    client.on('ready', () => {
      if (!this.awaitingReady) void this.start();
      this.awaitingReady = false;
    });
  }

  /** Resolves once the server is known to be new enough, or cannot tell; rejects with RedisVersionError. */
  verified(): Promise<void> {
    if (this.verdict) return this.verdict;
    this.awaitingReady = this.client.status !== 'ready';
    return this.start();
  }

  private start(): Promise<void> {
    const run = this.run();
    this.verdict = run;
    // A refusal stands until the next connection; a lost INFO is asked again by the next caller.
    run.catch((error: unknown) => {
      if (this.verdict === run && !(error instanceof RedisVersionError)) this.verdict = undefined;
    });
    return run;
  }

  private async run(): Promise<void> {
    if (this.client instanceof Cluster && this.client.status !== 'ready') {
      // Before the cluster is ready its node list is empty, and a check over no node would
      // pass: wait for it, as the cluster's own commands wait in its offline queue.
      const cluster = this.client;
      await new Promise<void>((resolve) => cluster.once('ready', () => resolve()));
    }
    const nodes = this.client instanceof Cluster ? this.client.nodes('master') : [this.client];
    await Promise.all(nodes.map((node) => this.checkNode(node)));
  }

  private async checkNode(node: RedisClient): Promise<void> {
    const target = node instanceof Cluster ? 'the cluster' : describeNode(node);
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
