import { Module } from '@nestjs/common';
import { HistoryController } from './history.controller';
import { JobControlController } from './job-control.controller';
import { JobsController } from './jobs.controller';
import { LanesController } from './lanes.controller';
import { LimitsController } from './limits.controller';
import { QueuesController } from './queues.controller';
import { SchedulesController } from './schedules.controller';

/** The /queues routes. QueueService comes from the global EchoMqModule. */
@Module({
  controllers: [
    QueuesController,
    JobsController,
    LanesController,
    LimitsController,
    SchedulesController,
    JobControlController,
    HistoryController,
  ],
})
export class QueuesModule {}
