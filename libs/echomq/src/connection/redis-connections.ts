import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { installScripts, type RedisClient, type ScriptedClient } from '../scripts';
import type { EchoMqConnection, EchoMqModuleOptions } from '../module/echomq-options';
import { ECHOMQ_OPTIONS } from '../module/module-definition';
import { validateModuleOptions } from '../module/validate-options';
import { DeadlineRedis } from './deadline-redis';

/** TCP keepalive's first probe after this much silence: a second line of defence after deadlines. */
const KEEPALIVE_MS = 10_000;

/**
 * Options every EchoMQ connection gets on top of the user's: keepalive on, and for the
 * cluster (whose node connections ioredis creates itself) ioredis's own per-command
 * timeout, since DeadlineRedis cannot be slotted in there.
 */
function hardened(options: RedisOptions | undefined, commandTimeoutMs?: number): RedisOptions {
  return {
    keepAlive: KEEPALIVE_MS,
    ...options,
    ...(commandTimeoutMs === undefined
      ? {}
      : { commandTimeout: commandTimeoutMs, autoResendUnfulfilledCommands: false }),
  };
}

/**
 * A plain client on the configured connection: a Redis or a Cluster. `overrides` are
 * applied last (e.g. maxRetriesPerRequest for blocking clients).
 */
export function createRedisClient(connection: EchoMqConnection, overrides: RedisOptions = {}): RedisClient {
  if ('cluster' in connection) {
    const { nodes, options } = connection.cluster;
    return new Cluster(nodes, {
      ...options,
      redisOptions: { ...hardened(options?.redisOptions), ...overrides },
    });
  }
  const { url, ...options } = connection;
  return new Redis(url as string, { ...hardened(options), ...overrides });
}

/** The command client: every command has a deadline (see DeadlineRedis). */
export function createCommandClient(connection: EchoMqConnection, commandTimeoutMs: number): RedisClient {
  if ('cluster' in connection) {
    const { nodes, options } = connection.cluster;
    return new Cluster(nodes, {
      ...options,
      redisOptions: hardened(options?.redisOptions, commandTimeoutMs),
    });
  }
  const { url, ...options } = connection;
  return new DeadlineRedis(url, hardened(options), commandTimeoutMs);
}

/**
 * The one owner of EchoMQ's Redis connections in an application: a shared client for
 * commands and scripts, plus one dedicated client per blocking wait (a blocked
 * connection can serve nothing else). All are closed at application shutdown,
 * after the hooks registered with beforeClose have run; every step is bounded, so
 * shutdown ends whatever the network does.
 */
@Injectable()
export class RedisConnections implements OnApplicationShutdown {
  private readonly logger = new Logger('EchoMQ');
  readonly client: ScriptedClient;
  readonly commandTimeoutMs: number;
  private readonly blocking = new Set<RedisClient>();
  private readonly closers: (() => Promise<void>)[] = [];
  private closed = false;

  constructor(@Inject(ECHOMQ_OPTIONS) private readonly options: EchoMqModuleOptions) {
    // First, before any connection exists: a bad option stops the boot having touched nothing.
    this.commandTimeoutMs = validateModuleOptions(options).commandTimeoutMs;
    this.client = installScripts(createCommandClient(options.connection, this.commandTimeoutMs));
    this.client.on('error', (error: Error) => this.logger.warn(`Redis: ${error.message}`));
  }

  /** A new connection for blocking reads. Its owner closes it with release(). */
  createBlockingClient(): RedisClient {
    const client = createRedisClient(this.options.connection, { maxRetriesPerRequest: null });
    client.on('error', () => undefined); // reconnects are handled by the caller's watchdog
    this.blocking.add(client);
    return client;
  }

  release(client: RedisClient): void {
    this.blocking.delete(client);
    client.disconnect();
  }

  beforeClose(hook: () => Promise<void>): void {
    this.closers.push(hook);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const hook of this.closers) {
      await hook().catch((error: Error) => this.logger.warn(`Shutdown hook failed: ${error.message}`));
    }
    for (const client of this.blocking) client.disconnect();
    this.blocking.clear();
    if (this.client instanceof DeadlineRedis) this.client.failHeld();
    // QUIT has its deadline like any command; a silent socket is then simply dropped.
    await this.client.quit().catch(() => undefined);
    // Only a QUIT that did not get through leaves a socket to drop (dropping an ended
    // client would start ioredis's reconnect bookkeeping for nothing).
    if (this.client.status !== 'end') this.client.disconnect();
  }
}
