import { QueueService, type FlowLimits } from '@app/echomq';
import { Body, Controller, Get, HttpCode, HttpStatus, Param, Put } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ErrorBody } from '../errors/error-body';
import { ApiQueueParam } from './api-params';
import { FlowLimitsDto, FlowLimitsResponse } from './dto/flow-limits.dto';
import { QueueNamePipe } from './pipes/queue-name.pipe';

/**
 * The queue's shared flow limits (rate, global and per-lane concurrency). They live in Redis,
 * so a change here applies to every worker at its next claim; a worker that boots with
 * different configured values writes its own (last writer wins) and logs the difference.
 */
@ApiTags('limits')
@ApiBearerAuth()
@ApiQueueParam()
@ApiBadRequestResponse({ type: ErrorBody, description: 'Malformed input; nothing was written' })
@ApiUnauthorizedResponse({
  type: ErrorBody,
  description: 'EMQ_API_TOKEN is set and the bearer token is missing or wrong',
})
@Controller('queues/:queue/limits')
export class LimitsController {
  constructor(private readonly queues: QueueService) {}

  @Get()
  @ApiOperation({ summary: "The queue's stored flow limits (null where none is set)" })
  @ApiOkResponse({ type: FlowLimitsResponse })
  async get(@Param('queue', QueueNamePipe) queue: string): Promise<FlowLimitsResponse> {
    return this.queues.getLimits(queue);
  }

  @Put()
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Set flow limits: a field left out is kept, null clears it' })
  @ApiNoContentResponse()
  async set(@Param('queue', QueueNamePipe) queue: string, @Body() body: FlowLimitsDto): Promise<void> {
    // Only the fields sent: an absent field must leave the stored value alone.
    const limits: Partial<FlowLimits> = {
      ...(body.rateLimit !== undefined ? { rateLimit: body.rateLimit } : {}),
      ...(body.globalConcurrency !== undefined ? { globalConcurrency: body.globalConcurrency } : {}),
      ...(body.laneConcurrency !== undefined ? { laneConcurrency: body.laneConcurrency } : {}),
      ...(body.laneRateLimit !== undefined ? { laneRateLimit: body.laneRateLimit } : {}),
    };
    await this.queues.setLimits(queue, limits);
  }
}
