import { Module } from '@nestjs/common';
import { QueueService } from '../queue/queue.service';
import { jobIdMinterProvider } from './id-minter.provider';
import { EchoMqConfigurableModule } from './module-definition';
import { RedisConnections } from './redis-connections';

/**
 * `EchoMqModule.forRoot({ connection })` or `forRootAsync({ useFactory, inject })`.
 * Global by default, so QueueService is injectable everywhere.
 */
@Module({
  providers: [RedisConnections, jobIdMinterProvider, QueueService],
  exports: [RedisConnections, QueueService],
})
export class EchoMqModule extends EchoMqConfigurableModule {}
