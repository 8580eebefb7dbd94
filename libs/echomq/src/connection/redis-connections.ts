import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Cluster, Redis } from 'ioredis';
import { installScripts, type RedisClient, type ScriptedClient } from '../scripts';
import type { EchoMqConnection, EchoMqModuleOptions } from '../module/echomq-options';
import { ECHOMQ_OPTIONS } from '../module/module-definition';

export function createRedisClient(
  connection: EchoMqConnection,
  overrides: Record<string, unknown> = {},
): RedisClient {
  if ('cluster' in connection) {
    const { nodes, options } = connection.cluster;
    return new Cluster(nodes, {
      ...options,
      redisOptions: { ...options?.redisOptions, ...overrides },
    });
  }
  const { url, ...options } = connection;
  return url === undefined
    ? new Redis({ ...options, ...overrides })
    : new Redis(url, { ...options, ...overrides });
}

/**
 * The one owner of EchoMQ's Redis connections in an application: a shared client for
 * commands and scripts, plus one dedicated client per blocking wait (a blocked
 * connection can serve nothing else). All are closed at application shutdown,
 * after the hooks registered with beforeClose have run.
 */
@Injectable()
export class RedisConnections implements OnApplicationShutdown {
  private readonly logger = new Logger('EchoMQ');
  readonly client: ScriptedClient;
  private readonly blocking = new Set<RedisClient>();
  private readonly closers: (() => Promise<void>)[] = [];
  private closed = false;

  constructor(@Inject(ECHOMQ_OPTIONS) private readonly options: EchoMqModuleOptions) {
    this.client = installScripts(createRedisClient(options.connection));
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
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
