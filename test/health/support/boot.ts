import type { INestApplication, LoggerService, Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { EchoMqModule, type EchoMqModuleOptions } from '@app/echomq';
import { RedisConnections } from '@app/echomq/internal';
import { EchoMqHealthIndicator } from '@app/echomq/health';
import { redisUrl } from '../../support/redis';

export interface BootOptions {
  /** Replaces the application's RedisConnections (see NoDeadlineConnections). */
  readonly connections?: (options: EchoMqModuleOptions) => RedisConnections;
  /** Where the application logs (e.g. a CapturedLog); errors only to the console otherwise. */
  readonly logger?: LoggerService;
}

/**
 * A Nest application as a user wires the indicator: EchoMqModule, TerminusModule and
 * EchoMqHealthIndicator beside the processors, against the suite's Redis unless told otherwise.
 */
export async function bootWithHealth(
  providers: Provider[],
  options: Partial<EchoMqModuleOptions> = {},
  boot: BootOptions = {},
): Promise<INestApplication> {
  const moduleOptions: EchoMqModuleOptions = { connection: { url: redisUrl() }, ...options };
  let builder = Test.createTestingModule({
    imports: [EchoMqModule.forRoot(moduleOptions), TerminusModule],
    providers: [...providers, EchoMqHealthIndicator],
  });
  if (boot.connections) {
    const make = boot.connections;
    builder = builder.overrideProvider(RedisConnections).useFactory({ factory: () => make(moduleOptions) });
  }
  const app = (await builder.compile()).createNestApplication({ logger: boot.logger ?? ['error'] });
  await app.init();
  return app;
}
