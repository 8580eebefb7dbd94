import { Redis } from 'ioredis';
import {
  installScripts,
  RedisConnections,
  type EchoMqModuleOptions,
  type ScriptedClient,
} from '@app/echomq/internal';

/**
 * The defect a claim loop's liveness record exists to catch, made real: EchoMQ's command
 * connection replaced by a plain ioredis client without a command deadline, connected through
 * `url` (a FaultProxy). Once the proxy goes silent, a claim sent on it never answers and the
 * loop's claim step never ends, as no EchoMQ connection allows. The module's own connection
 * (with its deadline) is kept beside it, on the real Redis, for the checks made on connect.
 * The client does not reconnect: when the proxy closes its sockets every command fails, which
 * ends the stuck claim so the application can shut down.
 */
export class NoDeadlineConnections extends RedisConnections {
  private readonly checked: ScriptedClient;

  constructor(options: EchoMqModuleOptions, url: string) {
    super(options);
    this.checked = this.client;
    const plain = installScripts(
      new Redis(url, {
        retryStrategy: () => null,
        autoResendUnfulfilledCommands: false,
        maxRetriesPerRequest: 0,
      }),
    );
    plain.on('error', () => undefined);
    (this as { client: ScriptedClient }).client = plain;
  }

  override async onApplicationShutdown(): Promise<void> {
    await super.onApplicationShutdown();
    this.checked.disconnect();
  }
}
