import { QueueService } from '@app/echomq';
import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { QueueNamePipe } from '../queues/pipes/queue-name.pipe';
import { DASHBOARD_LIST_DEFAULT, DashboardJobListQuery } from './dto/job-list.query';
import { DashboardEventHub } from './events/event-hub';
import { checkCursor } from './lists/list-sources';
import { listFiltered, type ListPage } from './lists/filtered-list';
import { OverviewSampler } from './overview/overview-sampler';
import type { Overview } from './overview/overview.types';

/**
 * What the dashboard's page reads: the overview, the live event stream and filtered job
 * listings. Guarded like /queues (bearer token or session cookie). Left out of the OpenAPI
 * document: these routes serve the page and may change with it.
 */
@ApiExcludeController()
@Controller('dashboard/api')
export class DashboardDataController {
  constructor(
    private readonly sampler: OverviewSampler,
    private readonly hub: DashboardEventHub,
    private readonly queues: QueueService,
  ) {}

  @Get('overview')
  async overview(): Promise<Overview> {
    return (await this.sampler.current()).overview;
  }

  @Get('events')
  events(@Res() response: Response): void {
    const close = this.hub.open(response);
    // The response closes when the page goes away (or the stream is ended at shutdown).
    response.on('close', close);
  }

  @Get('queues/:queue/jobs')
  async jobs(
    @Param('queue', QueueNamePipe) queue: string,
    @Query() query: DashboardJobListQuery,
  ): Promise<ListPage> {
    const state = query.state ?? 'pending';
    checkCursor(state, query.after);
    return listFiltered(this.queues, queue, {
      state,
      limit: query.limit ?? DASHBOARD_LIST_DEFAULT,
      ...(query.after === undefined ? {} : { after: query.after }),
      ...(query.name === undefined ? {} : { name: query.name }),
      ...(query.lane === undefined ? {} : { lane: query.lane }),
    });
  }
}
