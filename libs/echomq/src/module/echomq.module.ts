import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { QueueService } from '../queue/queue.service';
import { ProcessorExplorer } from '../worker/processor-explorer';
import { QueueEventsExplorer } from '../events/queue-events-explorer';
import { Reaper } from '../worker/reaper';
import { appScheduleModule } from './app-schedule.module';
import { EchoMqFeatureModule } from './queue-feature';
import type { QueueRef } from '../queue/queue-definition';
import { jobIdMinterProvider } from './id-minter.provider';
import { EchoMqConfigurableModule } from './module-definition';
import { RedisConnections } from '../connection/redis-connections';
import { RuntimeHooksRegistry } from '../observability/runtime-hooks-registry';
import { EchoMqMetrics } from '../metrics/echomq-metrics';
import { EchoMqTracing } from '../tracing/echomq-tracing';

/**
 * `EchoMqModule.forRoot({ connection })` or `forRootAsync({ useFactory, inject })`.
 * Global by default, so QueueService is injectable everywhere. Any provider marked
 * @Processor in the application is discovered and served; with none, the
 * application is a producer only.
 */
@Module({
  imports: [DiscoveryModule, appScheduleModule],
  providers: [
    RedisConnections,
    jobIdMinterProvider,
    QueueService,
    Reaper,
    ProcessorExplorer,
    QueueEventsExplorer,
    RuntimeHooksRegistry,
    EchoMqMetrics,
    EchoMqTracing,
  ],
  exports: [
    RedisConnections,
    QueueService,
    ProcessorExplorer,
    RuntimeHooksRegistry,
    EchoMqMetrics,
    EchoMqTracing,
  ],
})
export class EchoMqModule extends EchoMqConfigurableModule {
  /**
   * Makes the typed handles of these queues injectable in the importing module
   * (`@InjectQueue(Emails)`), as @nestjs/bullmq's registerQueue does. Import forRoot once,
   * in the root module; a second forRoot is refused at boot.
   */
  static forFeature(queues: readonly QueueRef[]): DynamicModule {
    return EchoMqFeatureModule.register(queues);
  }
}
