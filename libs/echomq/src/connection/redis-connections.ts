import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Cluster, Redis, type NatMap, type RedisOptions } from 'ioredis';
import { installScripts, type RedisClient, type ScriptedClient } from '../scripts';
import type { EchoMqConnection, EchoMqModuleOptions } from '../module/echomq-options';
import { ECHOMQ_OPTIONS } from '../module/module-definition';
import { validateModuleOptions } from '../module/validate-options';
import { RedisUnavailableError } from '../errors';
import { DeadlineRedis } from './deadline-redis';
import { describeCluster, describeTarget } from './describe-target';
import { Reachability } from './reachability';
import { RedisVersionCheck } from './redis-version';
import { ServerConfigCheck } from './server-config-check';

/** TCP keepalive's first probe after this much silence: a second line of defence after deadlines. */
const KEEPALIVE_MS = 10_000;
const RECONNECT_FIRST_MS = 50;
const RECONNECT_MAX_MS = 2_000;

/** A reconnect schedule: the wait (ms) before reconnect attempt `attempt` (1, 2, ...). */
export type ReconnectDelay = (attempt: number) => number;

/**
 * The wait before reconnect attempt `attempt` (1, 2, ...): doubling from 50 ms up to 2 s, with
 * jitter, so the processes that lost one Redis do not all knock at once when it restarts.
 * It never gives up: an EchoMQ connection ends only when the application closes it.
 */
export function reconnectDelay(attempt: number): number {
  const ceiling = Math.min(RECONNECT_MAX_MS, RECONNECT_FIRST_MS * 2 ** Math.min(attempt - 1, 16));
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

/**
 * Options every EchoMQ connection gets on top of the user's: keepalive on, reconnects
 * forever (reconnectDelay, unless the user gives a retryStrategy), and for the cluster
 * (whose node connections ioredis creates itself) ioredis's own per-command timeout,
 * since DeadlineRedis cannot be slotted in there.
 */
function hardened(
  options: RedisOptions | undefined,
  commandTimeoutMs?: number,
  retry: ReconnectDelay = reconnectDelay,
): RedisOptions {
  return {
    keepAlive: KEEPALIVE_MS,
    retryStrategy: retry,
    ...(options?.sentinels ? { reconnectOnError: reconnectOnReadOnly } : {}),
    ...options,
    ...(commandTimeoutMs === undefined
      ? {}
      : { commandTimeout: commandTimeoutMs, autoResendUnfulfilledCommands: false }),
  };
}

/** Sentinel: a connection to a master demoted to a replica answers READONLY; reconnecting asks the sentinels again. */
function reconnectOnReadOnly(error: Error): 1 | false {
  return /^READONLY\b/.test(error.message) ? 1 : false;
}

/**
 * A plain client on the configured connection: a Redis or a Cluster. `overrides` are
 * applied last (e.g. maxRetriesPerRequest for blocking clients); `retry` is the reconnect
 * schedule used unless the application configured its own (retryStrategy, clusterRetryStrategy).
 */
export function createRedisClient(
  connection: EchoMqConnection,
  overrides: RedisOptions = {},
  retry: ReconnectDelay = reconnectDelay,
): RedisClient {
  if ('cluster' in connection) {
    const { nodes, options } = connection.cluster;
    return new Cluster(nodes, {
      clusterRetryStrategy: retry,
      ...options,
      redisOptions: { ...hardened(options?.redisOptions, undefined, retry), ...overrides },
    });
  }
  const { url, ...options } = connection;
  return new Redis(url as string, { ...hardened(options, undefined, retry), ...overrides });
}

/**
 * A plain client on one node of the configured cluster, `node` as the cluster client's slot map
 * names it (`host:port`): the cluster's redisOptions (auth, TLS, ...) hardened as for its own
 * node connections, the natMap applied, `overrides` last. For commands that must run on that
 * node and no other (a confirmation's WAIT counts the replicas of the node that runs it), where
 * a cluster client would route them by a slot map of its own.
 */
export function createClusterNodeClient(
  connection: EchoMqConnection,
  node: string,
  overrides: RedisOptions = {},
  retry: ReconnectDelay = reconnectDelay,
): Redis {
  if (!('cluster' in connection)) throw new Error(`not a cluster connection: no node ${node} to connect to`);
  const { options } = connection.cluster;
  return new Redis({
    ...hardened(options?.redisOptions, undefined, retry),
    ...overrides,
    ...nodeAddress(node, options?.natMap),
  });
}

/** Where to connect for node `key` (`host:port`): its natMap entry, if any, as ioredis's own cluster client maps it. */
function nodeAddress(key: string, natMap: NatMap | undefined): { host: string; port: number } {
  const mapped = typeof natMap === 'function' ? natMap(key) : natMap?.[key];
  if (mapped) return { host: mapped.host, port: mapped.port };
  const colon = key.lastIndexOf(':');
  return { host: key.slice(0, colon), port: Number(key.slice(colon + 1)) };
}

/** The command client: every command has a deadline (see DeadlineRedis). */
export function createCommandClient(connection: EchoMqConnection, commandTimeoutMs: number): RedisClient {
  if ('cluster' in connection) {
    const { nodes, options } = connection.cluster;
    return new Cluster(nodes, {
      clusterRetryStrategy: reconnectDelay,
      ...options,
      redisOptions: hardened(options?.redisOptions, commandTimeoutMs),
    });
  }
  const { url, ...options } = connection;
  // Sentinel: follow a +switch-master at once. A master that stays up (a failover ordered by
  // hand, a healed partition) keeps taking writes until the sentinels reconfigure it and drop
  // its clients, about 10 s later; those writes are lost. Only on this long-lived client.
  const follow = options.sentinels ? { failoverDetector: true } : {};
  return new DeadlineRedis(url, { ...follow, ...hardened(options) }, commandTimeoutMs);
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
  /** The server's version, checked on each connection of the command client (docs/upgrading.md). */
  readonly redisVersion: RedisVersionCheck;
  /** maxmemory-policy and persistence, read on each connection of the command client (docs/reliability.md). */
  readonly serverConfig: ServerConfigCheck;
  /** Whether the command connection reaches Redis; it logs the one line an outage gets. */
  readonly reachability: Reachability;
  private readonly blocking = new Set<RedisClient>();
  private readonly commandLostListeners = new Set<() => void>();
  private readonly closers: (() => Promise<void>)[] = [];
  private closed = false;

  constructor(@Inject(ECHOMQ_OPTIONS) private readonly options: EchoMqModuleOptions) {
    // First, before any connection exists: a bad option stops the boot having touched nothing.
    this.commandTimeoutMs = validateModuleOptions(options).commandTimeoutMs;
    this.client = installScripts(createCommandClient(options.connection, this.commandTimeoutMs));
    // One line when Redis cannot be reached and one when it is back, not one per attempt.
    this.reachability = new Reachability(
      describeConnection(options.connection),
      this.commandTimeoutMs,
      this.logger,
    );
    this.reachability.watch(this.client);
    // A command connection that closed (its deadline found it silent, or Redis went away) casts
    // doubt on the blocked ones, whose own watchdogs wait out a long block (see onCommandLost).
    if (!(this.client instanceof Cluster)) this.client.on('close', () => this.commandLost());
    this.redisVersion = new RedisVersionCheck(this.client, this.logger);
    this.serverConfig = new ServerConfigCheck(this.client, this.logger, {
      requireNoEviction: options.requireNoEviction === true,
    });
  }

  /**
   * Resolves once the server passed every check made on connect (version, eviction policy),
   * or they cannot tell; rejects with RedisVersionError or EvictionPolicyError.
   */
  async serverVerified(): Promise<void> {
    await Promise.all([this.redisVersion.verified(), this.serverConfig.verified()]);
  }

  /**
   * A new client for blocking reads; `retry` is its reconnect schedule unless the application
   * set one. With `node` (a cluster's `host:port`, as its slot map names it), a plain client on
   * that one node instead of a cluster client (see createClusterNodeClient). Its owner closes
   * it with release().
   */
  createBlockingClient(retry: ReconnectDelay = reconnectDelay, node?: string): RedisClient {
    // No ready check: its INFO, still in flight when a short-lived wait releases the client,
    // fails the check, and ioredis then schedules a reconnect of a client already closed
    // (a stray timer that keeps the process alive). A blocking read needs no INFO first.
    // After shutdown nothing may open a connection: it would keep the process alive.
    if (this.closed) throw new RedisUnavailableError(describeConnection(this.options.connection), 0);
    const overrides = { maxRetriesPerRequest: null, enableReadyCheck: false };
    const client =
      node === undefined
        ? createRedisClient(this.options.connection, overrides, retry)
        : createClusterNodeClient(this.options.connection, node, overrides, retry);
    client.on('error', () => undefined); // reconnects are handled by the caller's watchdog
    this.blocking.add(client);
    return client;
  }

  /**
   * Calls `listener` each time the command connection closes while the application runs (not
   * on a cluster, whose nodes each have their own); returns the unsubscribe. Blocked reads use it
   * to give up their wait at once, so a silent or lost Redis is noticed within a command deadline
   * rather than at the end of a long block.
   */
  onCommandLost(listener: () => void): () => void {
    this.commandLostListeners.add(listener);
    return () => this.commandLostListeners.delete(listener);
  }

  private commandLost(): void {
    if (this.closed) return;
    for (const listener of [...this.commandLostListeners]) listener();
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
    // QUIT has its deadline like any command; a silent socket is then simply dropped. A
    // connection that is down gets no QUIT: it would only wait out its deadline.
    if (this.client.status === 'ready') await this.client.quit().catch(() => undefined);
    // Only a QUIT that did not get through leaves a socket to drop (dropping an ended
    // client would start ioredis's reconnect bookkeeping for nothing).
    // ioredis's QUIT leaves failoverDetector's sentinel subscriptions open; only disconnect() ends them.
    if (this.client.status !== 'end' || 'sentinels' in this.options.connection) this.client.disconnect();
  }
}

/** The configured Redis, as logs and errors name it. */
function describeConnection(connection: EchoMqConnection): string {
  if ('cluster' in connection) return describeCluster(connection.cluster.nodes);
  const { url, ...options } = connection;
  return describeTarget(url, options);
}
