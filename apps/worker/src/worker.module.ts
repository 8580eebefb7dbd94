import { Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { EchoMqModule } from '@app/echomq';
import { EchoMqHealthIndicator } from '@app/echomq/health';
import { DEMO_QUEUE, DemoProcessor } from './demo.processor';
import { OpsServer, WORKER_CONFIG } from './ops-server';
import type { WorkerConfig } from './worker-config';

const HOUR_MS = 3_600_000;

/**
 * Hosts the processors, and with EMQ_METRICS_PORT their `/metrics` and `/health` (OpsServer).
 * Queue settings come from configuration, not the decorators.
 */
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
        // Failed checks are logged as one JSON line, as the api does.
        TerminusModule.forRoot({ errorLogStyle: 'json' }),
      ],
      providers: [
        DemoProcessor,
        { provide: WORKER_CONFIG, useValue: config },
        EchoMqHealthIndicator,
        OpsServer,
      ],
    };
  }
}
