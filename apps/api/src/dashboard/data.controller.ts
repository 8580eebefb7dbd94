import { QueueService } from '@app/echomq';
import { assertQueueName } from '@app/echomq/internal';
import { Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { DashboardSessions } from '../auth/dashboard-sessions';
import { sessionOf } from '../auth/request-session';
import { QueueNamePipe } from '../queues/pipes/queue-name.pipe';
import { DashboardEventsQuery } from './dto/events.query';
import { DASHBOARD_LIST_DEFAULT, DashboardJobListQuery } from './dto/job-list.query';
import { DashboardEventHub } from './events/event-hub';
import type { StreamSession } from './events/sse-stream';
import { listFiltered, type ListPage, type ListRequest } from './lists/filtered-list';
import { checkCursor } from './lists/list-sources';
import { SharedListReads } from './lists/shared-reads';
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
    private readonly lists: SharedListReads,
    private readonly sessions: DashboardSessions,
    private readonly queues: QueueService,
  ) {}

  @Get('overview')
  async overview(): Promise<Overview> {
    return (await this.sampler.current()).overview;
  }

  @Get('events')
  events(@Query() query: DashboardEventsQuery, @Req() request: Request, @Res() response: Response): void {
    const queue = query.queue === undefined ? undefined : assertQueueName(query.queue);
    const close = this.hub.open(response, {
      ...(queue === undefined ? {} : { queue }),
      ...this.streamSession(request),
    });
    // The response closes when the page goes away (or the stream is ended: shutdown, session over).
    response.on('close', close);
  }

  @Get('queues/:queue/jobs')
  async jobs(
    @Param('queue', QueueNamePipe) queue: string,
    @Query() query: DashboardJobListQuery,
  ): Promise<ListPage> {
    const state = query.state ?? 'pending';
    checkCursor(state, query.after);
    const request: ListRequest = {
      state,
      limit: query.limit ?? DASHBOARD_LIST_DEFAULT,
      ...(query.after === undefined ? {} : { after: query.after }),
      ...(query.name === undefined ? {} : { name: query.name }),
      ...(query.lane === undefined ? {} : { lane: query.lane }),
    };
    // Shared only while the hub follows the queue: its events drop the shared pages they change.
    return this.lists.read(queue, request, this.hub.isLive(queue), () =>
      listFiltered(this.queues, queue, request),
    );
  }

  /** The session the request came in on, as the stream checks it: ended by logout or expiry. */
  private streamSession(request: Request): { session?: StreamSession } {
    const session = sessionOf(request);
    if (session === undefined) return {};
    return { session: { expiresAt: session.expiresAt, isLive: () => this.sessions.isLive(session) } };
  }
}
