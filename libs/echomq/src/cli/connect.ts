import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { RedisConnections } from '../connection/redis-connections';
import { EchoMqModule } from '../module/echomq.module';
import { QueueService } from '../queue/queue.service';
import type { ScriptedClient } from '../scripts';

/** Where the command line finds Redis and the application's keys (the global options). */
export interface ConnectionSettings {
  /** redis:// or rediss:// (TLS) URL, with credentials and database as ioredis reads them. */
  readonly url: string;
  /** The application's keyPrefix. */
  readonly prefix: string;
  /** Every Redis command's deadline (the module's commandTimeoutMs). */
  readonly timeoutMs: number;
}

/**
 * The node number the command line mints on. It never mints (no command enqueues), so it takes
 * a configured number rather than leasing one from Redis, which would write a lease key and
 * renew it in the background for nothing.
 */
const CLI_NODE_ID = 1023;

/**
 * How long ioredis lets a socket it is closing finish on its own before destroying it (its
 * default is 2 s): with Redis unreachable, a connection attempt still in flight would keep the
 * process alive that long after the command has reported the error.
 */
const DISCONNECT_TIMEOUT_MS = 100;

export interface Connection {
  readonly queues: QueueService;
  /** The command connection QueueService uses (for what spans queues: the doctor's discovery). */
  readonly redis: ScriptedClient;
  /** Closes the connections (and with them everything the command started). */
  close(): Promise<void>;
}

/**
 * The library's own QueueService, in a Nest application context of EchoMqModule alone: no
 * processors, so no claim loop and no reaper run, and closing the context closes every
 * connection, so the process exits as soon as the command is done. Nest's own logs are off;
 * the command reports what went wrong itself.
 */
export async function connect(settings: ConnectionSettings): Promise<Connection> {
  @Module({
    imports: [
      EchoMqModule.forRoot({
        connection: { url: settings.url, disconnectTimeout: DISCONNECT_TIMEOUT_MS },
        keyPrefix: settings.prefix,
        commandTimeoutMs: settings.timeoutMs,
        nodeId: CLI_NODE_ID,
      }),
    ],
  })
  class CliModule {}

  const app = await NestFactory.createApplicationContext(CliModule, { logger: false, abortOnError: false });
  return {
    queues: app.get(QueueService),
    redis: app.get(RedisConnections).client,
    close: () => app.close(),
  };
}
