import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { QueueService } from '../queue/queue.service';
import { ProcessorExplorer } from '../worker/processor-explorer';
import { Reaper } from '../worker/reaper';
import { appScheduleModule } from './app-schedule.module';
import { jobIdMinterProvider } from './id-minter.provider';
import { EchoMqConfigurableModule } from './module-definition';
import { RedisConnections } from '../connection/redis-connections';

/**
 * `EchoMqModule.forRoot({ connection })` or `forRootAsync({ useFactory, inject })`.
 * Global by default, so QueueService is injectable everywhere. Any provider marked
 * @Processor in the application is discovered and served; with none, the
 * application is a producer only.
 */
@Module({
  imports: [DiscoveryModule, appScheduleModule],
  providers: [RedisConnections, jobIdMinterProvider, QueueService, Reaper, ProcessorExplorer],
  exports: [RedisConnections, QueueService, ProcessorExplorer],
})
export class EchoMqModule extends EchoMqConfigurableModule {}
