import { QueueService, JobNotFoundError, type JobId, type StateSet } from '@app/echomq';
import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ErrorBody } from '../errors/error-body';
import { ApiJobIdParam, ApiQueueParam } from './api-params';
import { EnqueueBulkDto } from './dto/enqueue-bulk.dto';
import { withDedupe } from './dto/enqueue-dedupe.dto';
import { EnqueueJobDto } from './dto/enqueue-job.dto';
import { SubmittedJobResponse } from './dto/enqueue-result.response';
import { BulkEnqueuedResponse, JobListResponse, JobResponse, RetriedJobResponse } from './dto/job.response';
import { ListJobsQuery } from './dto/list-jobs.query';
import { toBrowseOptions, toJobResponse, toJobToEnqueue } from './job-mapping';
import { JobIdPipe } from './pipes/job-id.pipe';
import { QueueNamePipe } from './pipes/queue-name.pipe';

/** Producer and admin routes for the jobs of one queue. Thin: QueueService does the work. */
@ApiTags('jobs')
@ApiBearerAuth()
@ApiQueueParam()
@ApiBadRequestResponse({ type: ErrorBody, description: 'Malformed input; nothing was written' })
@ApiUnauthorizedResponse({
  type: ErrorBody,
  description: 'EMQ_API_TOKEN is set and the bearer token is missing or wrong',
})
@Controller('queues/:queue/jobs')
export class JobsController {
  constructor(private readonly queues: QueueService) {}

  @Post()
  @ApiOperation({
    summary:
      'Enqueue a job (pending, or schedule when delayed), with an idempotency key, debounce or throttle',
    description:
      'Answers 201 whether the call created a job, matched an existing one or replaced a debounced one: ' +
      '`outcome` says which, and `id` is the job that will run.',
  })
  @ApiCreatedResponse({ type: SubmittedJobResponse })
  @ApiPayloadTooLargeResponse({ type: ErrorBody, description: 'Body or payload over its limit' })
  async enqueue(
    @Param('queue', QueueNamePipe) queue: string,
    @Body() body: EnqueueJobDto,
  ): Promise<SubmittedJobResponse> {
    const { data, ...options } = withDedupe(toJobToEnqueue(body), body);
    const { id, outcome } = await this.queues.submit(queue, data, options);
    // Read the state back rather than guess it: the server clock decides pending vs schedule,
    // and a matched job may have moved on since.
    const view = await this.queues.getJob(queue, id);
    return { id, queue, state: view?.state ?? 'unknown', outcome };
  }

  @Post('bulk')
  @ApiOperation({ summary: 'Enqueue many jobs in one round trip, all or nothing' })
  @ApiCreatedResponse({ type: BulkEnqueuedResponse })
  @ApiPayloadTooLargeResponse({ type: ErrorBody, description: 'Body or a payload over its limit' })
  async enqueueBulk(
    @Param('queue', QueueNamePipe) queue: string,
    @Body() body: EnqueueBulkDto,
  ): Promise<BulkEnqueuedResponse> {
    // Debounce and throttle jobs are refused here (400): each goes alone through POST /jobs.
    const ids = await this.queues.enqueueMany(
      queue,
      body.jobs.map((item) => withDedupe(toJobToEnqueue(item), item)),
    );
    return { ids };
  }

  @Get()
  @ApiOperation({
    summary: 'List jobs in one state (pending and dead newest first); pending by lane and priority',
  })
  @ApiOkResponse({ type: JobListResponse })
  async list(
    @Param('queue', QueueNamePipe) queue: string,
    @Query() query: ListJobsQuery,
  ): Promise<JobListResponse> {
    const state: StateSet = query.state ?? 'pending';
    const views = await this.queues.listJobs(queue, state, toBrowseOptions(state, query));
    return { jobs: views.map(toJobResponse) };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read one job and its state' })
  @ApiJobIdParam()
  @ApiOkResponse({ type: JobResponse })
  @ApiNotFoundResponse({ type: ErrorBody })
  async get(
    @Param('queue', QueueNamePipe) queue: string,
    @Param('id', JobIdPipe) id: JobId,
  ): Promise<JobResponse> {
    const view = await this.queues.getJob(queue, id);
    if (!view) throw new JobNotFoundError(id);
    return toJobResponse(view);
  }

  @Post(':id/retry')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Move a dead job back to pending with a fresh retry budget' })
  @ApiJobIdParam()
  @ApiOkResponse({ type: RetriedJobResponse })
  @ApiNotFoundResponse({ type: ErrorBody })
  @ApiConflictResponse({ type: ErrorBody, description: 'The job is not dead' })
  async retry(
    @Param('queue', QueueNamePipe) queue: string,
    @Param('id', JobIdPipe) id: JobId,
  ): Promise<RetriedJobResponse> {
    await this.queues.retry(queue, id);
    return { id, queue, state: 'pending' };
  }

  @Delete(':id')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: "Remove a job in any state (an active job's handler is aborted)" })
  @ApiJobIdParam()
  @ApiNoContentResponse()
  @ApiNotFoundResponse({ type: ErrorBody })
  async remove(
    @Param('queue', QueueNamePipe) queue: string,
    @Param('id', JobIdPipe) id: JobId,
  ): Promise<void> {
    await this.queues.remove(queue, id);
  }
}
