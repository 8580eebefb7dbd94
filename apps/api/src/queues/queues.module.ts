import { Module } from '@nestjs/common';
import { JobsController } from './jobs.controller';
import { QueuesController } from './queues.controller';

/** The /queues routes. QueueService comes from the global EchoMqModule. */
@Module({ controllers: [QueuesController, JobsController] })
export class QueuesModule {}
