import { QueueService } from '@app/echomq';
import { Controller, Get, Param, Query } from '@nestjs/common';
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
import { CompletedListResponse, RecentCompletedQuery } from './dto/recent-completed.dto';
import { QueueNamePipe } from './pipes/queue-name.pipe';

/**
 * What happened on a queue, read back from its event stream: the jobs completed lately. The
 * stream is capped, so this is a window, not an archive (docs/retention.md).
 */
@ApiTags('history')
@ApiBearerAuth()
@ApiQueueParam()
@ApiBadRequestResponse({ type: ErrorBody, description: 'Malformed input; nothing was read' })
@ApiUnauthorizedResponse({
  type: ErrorBody,
  description: 'EMQ_API_TOKEN is set and the bearer token is missing or wrong',
})
@Controller('queues/:queue')
export class HistoryController {
  constructor(private readonly queues: QueueService) {}

  @Get('completed')
  @ApiOperation({
    summary: 'Recently completed jobs, newest first, with their results when small (from the event stream)',
  })
  @ApiOkResponse({ type: CompletedListResponse })
  async completed(
    @Param('queue', QueueNamePipe) queue: string,
    @Query() query: RecentCompletedQuery,
  ): Promise<CompletedListResponse> {
    const completions = await this.queues.recentCompleted(queue, { limit: query.limit });
    return {
      jobs: completions.map(({ id, completedAt, result }) => ({
        id,
        completedAt: completedAt.toISOString(),
        ...(result !== undefined ? { result } : {}),
      })),
    };
  }
}
