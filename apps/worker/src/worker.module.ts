import { Module, type DynamicModule } from '@nestjs/common';
import { EchoMqModule } from '@app/echomq';
import { DEMO_QUEUE, DemoProcessor } from './demo.processor';
import type { WorkerConfig } from './worker-config';

const HOUR_MS = 3_600_000;

/** Hosts the processors. Queue settings come from configuration, not the decorators. */
@Module({})
export class WorkerModule {
  static forConfig(config: WorkerConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        EchoMqModule.forRoot({
          connection: { url: config.redisUrl, ...(config.redisTls ? { tls: config.redisTls } : {}) },
          keyPrefix: config.keyPrefix,
          shutdownGraceMs: config.shutdownGraceMs,
          queues: {
            [DEMO_QUEUE]: { concurrency: config.demoConcurrency, retainCompletedMs: HOUR_MS, maxAttempts: 3 },
          },
        }),
      ],
      providers: [DemoProcessor],
    };
  }
}
