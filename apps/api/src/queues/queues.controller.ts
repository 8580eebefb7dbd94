import { QueueService } from '@app/echomq';
import { Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ErrorBody } from '../errors/error-body';
import { ApiQueueParam } from './api-params';
import {
  PauseStateResponse,
  QueueDetailResponse,
  QueueListResponse,
  QueueSummaryResponse,
} from './dto/queue.response';
import { QueueNamePipe } from './pipes/queue-name.pipe';

/** Queue-level reads and admin: depths, counters, pause and resume. */
@ApiTags('queues')
@ApiBearerAuth()
@ApiUnauthorizedResponse({
  type: ErrorBody,
  description: 'EMQ_API_TOKEN is set and the bearer token is missing or wrong',
})
@Controller('queues')
export class QueuesController {
  constructor(private readonly queues: QueueService) {}

  @Get()
  @ApiOperation({ summary: 'Every known queue with its depth per state' })
  @ApiOkResponse({ type: QueueListResponse })
  async list(): Promise<QueueListResponse> {
    const names = await this.queues.listQueues();
    const queues = await Promise.all(
      names.map(async (queue): Promise<QueueSummaryResponse> => ({
        queue,
        counts: await this.queues.counts(queue),
      })),
    );
    return { queues };
  }

  @Get(':queue')
  @ApiOperation({
    summary: 'One queue: depths, transition counters, whether it is paused or held back, its partitions',
  })
  @ApiQueueParam()
  @ApiOkResponse({ type: QueueDetailResponse })
  @ApiBadRequestResponse({ type: ErrorBody })
  async get(@Param('queue', QueueNamePipe) queue: string): Promise<QueueDetailResponse> {
    const [counts, metrics, paused, heldUntil, layout] = await Promise.all([
      this.queues.counts(queue),
      this.queues.metrics(queue),
      this.queues.isPaused(queue),
      this.queues.heldUntil(queue),
      this.queues.partitionLayout(queue),
    ]);
    return {
      queue,
      counts,
      metrics,
      paused,
      heldUntil: heldUntil?.toISOString() ?? null,
      partitions: layout.count,
    };
  }

  @Post(':queue/pause')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Stop workers claiming from this queue (enqueue keeps working)' })
  @ApiQueueParam()
  @ApiOkResponse({ type: PauseStateResponse })
  @ApiBadRequestResponse({ type: ErrorBody })
  async pause(@Param('queue', QueueNamePipe) queue: string): Promise<PauseStateResponse> {
    await this.queues.pause(queue);
    return { queue, paused: true };
  }

  @Post(':queue/resume')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Let workers claim from this queue again' })
  @ApiQueueParam()
  @ApiOkResponse({ type: PauseStateResponse })
  @ApiBadRequestResponse({ type: ErrorBody })
  async resume(@Param('queue', QueueNamePipe) queue: string): Promise<PauseStateResponse> {
    await this.queues.resume(queue);
    return { queue, paused: false };
  }
}
