import type { INestApplication, Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { EchoMqModule, type EchoMqModuleOptions } from '@app/echomq';
import { redisUrl } from './redis';

/**
 * Boots a real Nest application with EchoMqModule and the given providers
 * (processors and their collaborators), against the suite's Redis unless told
 * otherwise. Call app.close() to run the graceful shutdown.
 */
export async function bootApp(
  providers: Provider[],
  options: Partial<EchoMqModuleOptions> = {},
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      EchoMqModule.forRoot({
        connection: { url: redisUrl() },
        reaper: { intervalMs: 100 },
        ...options,
      }),
    ],
    providers,
  }).compile();
  const app = moduleRef.createNestApplication({ logger: ['error'] });
  await app.init();
  return app;
}
