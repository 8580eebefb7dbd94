import { Module } from '@nestjs/common';
import { JobsController } from './jobs.controller';
import { LanesController } from './lanes.controller';
import { LimitsController } from './limits.controller';
import { QueuesController } from './queues.controller';

/** The /queues routes. QueueService comes from the global EchoMqModule. */
@Module({ controllers: [QueuesController, JobsController, LanesController, LimitsController] })
export class QueuesModule {}
