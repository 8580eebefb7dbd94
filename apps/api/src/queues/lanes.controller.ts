import { QueueService } from '@app/echomq';
import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, Put } from '@nestjs/common';
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
import { ApiLaneParam, ApiQueueParam } from './api-params';
import { LaneListResponse, LanePauseStateResponse } from './dto/lane.response';
import { LaneSettingsDto } from './dto/lane-settings.dto';
import { LaneNamePipe } from './pipes/lane-name.pipe';
import { QueueNamePipe } from './pipes/queue-name.pipe';

/**
 * The lanes of one queue: their depths and caps, pause and resume one lane, its weight and
 * concurrency. Pause answers like the queue's own pause route, so clients handle both alike.
 */
@ApiTags('lanes')
@ApiBearerAuth()
@ApiQueueParam()
@ApiBadRequestResponse({ type: ErrorBody, description: 'Malformed input; nothing was written' })
@ApiUnauthorizedResponse({
  type: ErrorBody,
  description: 'EMQ_API_TOKEN is set and the bearer token is missing or wrong',
})
@Controller('queues/:queue/lanes')
export class LanesController {
  constructor(private readonly queues: QueueService) {}

  @Get()
  @ApiOperation({
    summary:
      'Every lane with work, paused, or with its own settings: depths, state, caps; and the lane holds',
  })
  @ApiOkResponse({ type: LaneListResponse })
  async list(@Param('queue', QueueNamePipe) queue: string): Promise<LaneListResponse> {
    const [views, holds] = await Promise.all([this.queues.lanes(queue), this.queues.laneHolds(queue)]);
    // Field by field, so the wire shape stays what the docs say if LaneView grows.
    const lanes = views.map(({ lane, pending, active, paused, held, weight, concurrency }) => ({
      lane,
      pending,
      active,
      paused,
      held,
      weight,
      concurrency,
    }));
    const until = Object.entries(holds).map(([lane, at]): [string, string] => [lane, at.toISOString()]);
    return { lanes, holds: Object.fromEntries(until) };
  }

  @Put(':lane')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: "Set a lane's weight and concurrency (a field left out is kept, null clears it)" })
  @ApiLaneParam()
  @ApiNoContentResponse()
  async configure(
    @Param('queue', QueueNamePipe) queue: string,
    @Param('lane', LaneNamePipe) lane: string,
    @Body() body: LaneSettingsDto,
  ): Promise<void> {
    await this.queues.setLane(queue, lane, {
      ...(body.weight !== undefined ? { weight: body.weight } : {}),
      ...(body.concurrency !== undefined ? { concurrency: body.concurrency } : {}),
    });
  }

  @Post(':lane/pause')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Stop workers claiming from this lane (other lanes and enqueue keep working)' })
  @ApiLaneParam()
  @ApiOkResponse({ type: LanePauseStateResponse })
  async pause(
    @Param('queue', QueueNamePipe) queue: string,
    @Param('lane', LaneNamePipe) lane: string,
  ): Promise<LanePauseStateResponse> {
    await this.queues.pauseLane(queue, lane);
    return { queue, lane, paused: true };
  }

  @Post(':lane/resume')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'Let workers claim from this lane again' })
  @ApiLaneParam()
  @ApiOkResponse({ type: LanePauseStateResponse })
  async resume(
    @Param('queue', QueueNamePipe) queue: string,
    @Param('lane', LaneNamePipe) lane: string,
  ): Promise<LanePauseStateResponse> {
    await this.queues.resumeLane(queue, lane);
    return { queue, lane, paused: false };
  }
}
