import { InvalidArgumentError, JobNotFoundError, QueueService, type JobId } from '@app/echomq';
import { Body, Controller, HttpCode, HttpStatus, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ErrorBody } from '../errors/error-body';
import { ApiJobIdParam, ApiQueueParam } from './api-params';
import { CleanBodyDto, DrainBodyDto, RetryAllBodyDto, UpdateJobDto } from './dto/job-control.dto';
import {
  CleanedResponse,
  DrainedResponse,
  ObliteratedResponse,
  PromotedJobResponse,
  RetriedAllResponse,
} from './dto/job-control.response';
import { JobResponse } from './dto/job.response';
import { toJobResponse } from './job-mapping';
import { JobIdPipe } from './pipes/job-id.pipe';
import { QueueNamePipe } from './pipes/queue-name.pipe';
import { runAtToMs } from './dto/validators';

/**
 * Bulk and per-job controls of one queue (docs/job-control.md). The bulk routes run in chunks
 * of at most 500 jobs per Redis call and answer when every chunk is done.
 */
@ApiTags('job control')
@ApiBearerAuth()
@ApiQueueParam()
@ApiBadRequestResponse({ type: ErrorBody, description: 'Malformed input; nothing was written' })
@ApiUnauthorizedResponse({
  type: ErrorBody,
  description: 'EMQ_API_TOKEN is set and the bearer token is missing or wrong',
})
@Controller('queues/:queue')
export class JobControlController {
  constructor(private readonly queues: QueueService) {}

  @Post('drain')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Remove every pending job (all lanes and priorities) and, unless kept, every scheduled one',
  })
  @ApiOkResponse({ type: DrainedResponse })
  async drain(
    @Param('queue', QueueNamePipe) queue: string,
    @Body() body: DrainBodyDto,
  ): Promise<DrainedResponse> {
    const removed = await this.queues.drain(queue, { keepScheduled: body.keepScheduled ?? false });
    return { queue, removed };
  }

  @Post('clean')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary:
      'Remove jobs of one state enqueued more than olderThanMs ago, up to limit (pending: lane by lane, oldest first in each)',
  })
  @ApiOkResponse({ type: CleanedResponse })
  async clean(
    @Param('queue', QueueNamePipe) queue: string,
    @Body() body: CleanBodyDto,
  ): Promise<CleanedResponse> {
    const ids = await this.queues.clean(queue, body.state, {
      olderThanMs: body.olderThanMs,
      ...(body.limit === undefined ? {} : { limit: body.limit }),
    });
    return { queue, state: body.state, ids };
  }

  @Post('obliterate')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Delete the whole queue: jobs, lanes, settings, schedules, metrics, events' })
  @ApiQuery({
    name: 'force',
    required: false,
    enum: ['true', 'false'],
    description:
      'Also remove active jobs (their handlers are aborted); without it a busy queue is refused (409)',
  })
  @ApiOkResponse({ type: ObliteratedResponse })
  @ApiConflictResponse({ type: ErrorBody, description: 'Workers hold jobs of the queue (code QUEUE_BUSY)' })
  async obliterate(
    @Param('queue', QueueNamePipe) queue: string,
    @Query('force') force?: string,
  ): Promise<ObliteratedResponse> {
    if (force !== undefined && force !== 'true' && force !== 'false') {
      throw new InvalidArgumentError('force must be true or false');
    }
    const { removed } = await this.queues.obliterate(queue, { force: force === 'true' });
    return { queue, removed };
  }

  @Post('dead/retry')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Move dead jobs back to pending with a fresh retry budget, oldest first' })
  @ApiOkResponse({ type: RetriedAllResponse })
  async retryAll(
    @Param('queue', QueueNamePipe) queue: string,
    @Body() body: RetryAllBodyDto,
  ): Promise<RetriedAllResponse> {
    const retried = await this.queues.retryAll(queue, body.limit === undefined ? {} : { limit: body.limit });
    return { queue, retried };
  }

  @Post('jobs/:id/promote')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Move a scheduled job to pending now' })
  @ApiJobIdParam()
  @ApiOkResponse({ type: PromotedJobResponse })
  @ApiNotFoundResponse({ type: ErrorBody })
  @ApiConflictResponse({ type: ErrorBody, description: 'The job is not scheduled' })
  async promote(
    @Param('queue', QueueNamePipe) queue: string,
    @Param('id', JobIdPipe) id: JobId,
  ): Promise<PromotedJobResponse> {
    await this.queues.promote(queue, id);
    return { id, queue, state: 'pending' };
  }

  @Patch('jobs/:id')
  @ApiOperation({ summary: 'Change a job that is not active: data, run-at, priority, lane' })
  @ApiJobIdParam()
  @ApiOkResponse({ type: JobResponse })
  @ApiNotFoundResponse({ type: ErrorBody })
  @ApiConflictResponse({
    type: ErrorBody,
    description: 'The job is active or finished, or dead and given a run-at',
  })
  async update(
    @Param('queue', QueueNamePipe) queue: string,
    @Param('id', JobIdPipe) id: JobId,
    @Body() body: UpdateJobDto,
  ): Promise<JobResponse> {
    await this.queues.update(queue, id, {
      ...(body.data === undefined ? {} : { data: body.data }),
      ...(body.runAt === undefined ? {} : { runAt: runAtToMs(body.runAt) }),
      ...(body.delayMs === undefined ? {} : { delayMs: body.delayMs }),
      ...(body.priority === undefined ? {} : { priority: body.priority }),
      ...(body.lane === undefined ? {} : { lane: body.lane }),
    });
    const view = await this.queues.getJob(queue, id);
    if (!view) throw new JobNotFoundError(id);
    return toJobResponse(view);
  }
}
