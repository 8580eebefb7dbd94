import type { INestApplication, Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { EchoMqModule, type EchoMqModuleOptions } from '@app/echomq';
import type { CapturedLog } from '../../support/captured-log';

/** Boots an application as a user would, every log line going to `log`; `apps` gets it even if its boot fails. */
export async function bootLogged(
  apps: INestApplication[],
  log: CapturedLog,
  options: EchoMqModuleOptions,
  providers: Provider[] = [],
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [EchoMqModule.forRoot(options)],
    providers,
  })
    .setLogger(log)
    .compile();
  const app = moduleRef.createNestApplication({ logger: log });
  apps.push(app);
  await app.init();
  return app;
}
