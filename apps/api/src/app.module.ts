import { EchoMqModule } from '@app/echomq';
import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { ThrottlerGuard, ThrottlerModule } from '@nestjs/throttler';
import { ApiAuthGuard } from './auth/api-auth.guard';
import { AuthModule } from './auth/auth.module';
import { ApiConfig } from './config/api-config';
import { ApiConfigModule } from './config/api-config.module';
import { dashboardEnabled, type RawEnvironment } from './config/environment';
import { DashboardModule } from './dashboard/dashboard.module';
import type { RedisTlsOptions } from './config/redis-tls-files';
import { ApiExceptionFilter } from './errors/api-exception.filter';
import { HealthModule } from './health/health.module';
import { MetricsModule } from './metrics/metrics.module';
import { QueuesModule } from './queues/queues.module';

/** ioredis's `tls` when the environment gives TLS files (merged with what rediss:// turns on). */
function tlsOption(tls: RedisTlsOptions | undefined): { tls?: RedisTlsOptions } {
  return tls ? { tls } : {};
}

/**
 * The HTTP api: a producer and inspector of queues. It provides no @Processor classes,
 * so EchoMQ runs no claim loops here; workers live in apps/worker.
 */
@Module({})
export class AppModule {
  /** `env` is validated at boot; main passes process.env, tests pass their own. */
  static forRoot(env: RawEnvironment = process.env): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ApiConfigModule.forRoot(env),
        EchoMqModule.forRootAsync({
          inject: [ApiConfig],
          useFactory: (config: ApiConfig) => ({
            connection: { url: config.redisUrl, ...tlsOption(config.readRedisTls()) },
            ...(config.nodeId !== undefined ? { nodeId: config.nodeId } : {}),
            ...(config.keyPrefix !== undefined ? { keyPrefix: config.keyPrefix } : {}),
            ...(config.maxPayloadBytes !== undefined ? { maxPayloadBytes: config.maxPayloadBytes } : {}),
          }),
        }),
        ThrottlerModule.forRootAsync({
          inject: [ApiConfig],
          useFactory: (config: ApiConfig) => ({
            throttlers: [{ ttl: config.throttleTtlMs, limit: config.throttleLimit }],
            // EMQ_THROTTLE_LIMIT=0 switches throttling off (e.g. behind a gateway that already limits).
            skipIf: () => config.throttleLimit === 0,
          }),
        }),
        AuthModule,
        QueuesModule,
        HealthModule,
        MetricsModule,
        // EMQ_DASHBOARD=off leaves the module out: no routes, no sampler, no event readers.
        ...(dashboardEnabled(env) ? [DashboardModule] : []),
      ],
      providers: [
        // Guards run in this order: throttle first, so unauthenticated floods are limited too.
        { provide: APP_GUARD, useClass: ThrottlerGuard },
        { provide: APP_GUARD, useClass: ApiAuthGuard },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
      ],
    };
  }
}
