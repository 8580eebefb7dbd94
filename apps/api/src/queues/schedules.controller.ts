import {
  assertScheduleKey,
  QueueService,
  type ScheduleOptions,
  type ScheduleSpec,
  type ScheduleView,
} from '@app/echomq/internal';
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Injectable,
  NotFoundException,
  Param,
  Put,
  Query,
  type PipeTransform,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ErrorBody } from '../errors/error-body';
import { ApiQueueParam } from './api-params';
import { ScheduleDto } from './dto/schedule.dto';
import { ScheduleListQuery } from './dto/schedule-list.query';
import { ScheduleListResponse, ScheduleResponse, UpsertScheduleResponse } from './dto/schedule.response';
import { QueueNamePipe } from './pipes/queue-name.pipe';

/** Gates the :key path parameter with the library's rule: a bad key is a 400 and never reaches Redis. */
@Injectable()
class ScheduleKeyPipe implements PipeTransform<unknown, string> {
  transform(value: unknown): string {
    return assertScheduleKey(value);
  }
}

const ApiScheduleKeyParam = (): MethodDecorator =>
  ApiParam({
    name: 'key',
    description: 'Schedule key: 1-128 characters from A-Z a-z 0-9 _ . : @ + = -',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_.:@+=-]{1,128}$' },
    example: 'nightly-report',
  });

/** Field by field, so the wire shape stays what the docs say if ScheduleView grows. */
function toResponse(view: ScheduleView): ScheduleResponse {
  const { key, spec, options, template, nextRunAt, nextId } = view;
  return {
    key,
    spec: { ...spec },
    options: { missed: options.missed, missedAfterMs: options.missedAfterMs },
    template: { ...template },
    nextRunAt: nextRunAt === null ? null : nextRunAt.toISOString(),
    nextId,
  };
}

/**
 * A queue's cron and interval schedules (docs/schedules.md). Each schedule keeps exactly one
 * next occurrence, an ordinary job in the schedule set; PUT creates or changes one (the same
 * definition again is 'unchanged'), DELETE removes it with its waiting occurrence.
 */
@ApiTags('schedules')
@ApiBearerAuth()
@ApiQueueParam()
@ApiBadRequestResponse({ type: ErrorBody, description: 'Malformed input; nothing was written' })
@ApiUnauthorizedResponse({
  type: ErrorBody,
  description: 'EMQ_API_TOKEN is set and the bearer token is missing or wrong',
})
@Controller('queues/:queue/schedules')
export class SchedulesController {
  constructor(private readonly queues: QueueService) {}

  @Get()
  @ApiOperation({ summary: "The queue's schedules by key, a page at a time, each with its next occurrence" })
  @ApiOkResponse({ type: ScheduleListResponse })
  async list(
    @Param('queue', QueueNamePipe) queue: string,
    @Query() query: ScheduleListQuery,
  ): Promise<ScheduleListResponse> {
    const views = await this.queues.listSchedules(queue, {
      ...(query.after === undefined ? {} : { after: query.after }),
      ...(query.limit === undefined ? {} : { limit: query.limit }),
    });
    return { schedules: views.map(toResponse) };
  }

  @Get(':key')
  @ApiOperation({ summary: 'One schedule with its next occurrence' })
  @ApiScheduleKeyParam()
  @ApiOkResponse({ type: ScheduleResponse })
  @ApiNotFoundResponse({ type: ErrorBody, description: 'No schedule by that key' })
  async get(
    @Param('queue', QueueNamePipe) queue: string,
    @Param('key', ScheduleKeyPipe) key: string,
  ): Promise<ScheduleResponse> {
    const view = await this.queues.getSchedule(queue, key);
    if (!view) throw new NotFoundException(`No schedule '${key}' in queue ${queue}`);
    return toResponse(view);
  }

  @Put(':key')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary:
      'Create or change a schedule (cron with tz, or everyMs); its next occurrence is replaced when it changes',
  })
  @ApiScheduleKeyParam()
  @ApiOkResponse({ type: UpsertScheduleResponse })
  async upsert(
    @Param('queue', QueueNamePipe) queue: string,
    @Param('key', ScheduleKeyPipe) key: string,
    @Body() body: ScheduleDto,
  ): Promise<UpsertScheduleResponse> {
    const { template, ...spec } = body;
    // Which of cron / everyMs is given, and whether it parses, is the library's check (a 400).
    const checked = spec as ScheduleSpec & ScheduleOptions;
    const result = await this.queues.upsertSchedule(
      queue,
      key,
      checked,
      template ? { ...template } : undefined,
    );
    return { outcome: result.outcome, nextRunAt: result.nextRunAt.toISOString(), nextId: result.nextId };
  }

  @Delete(':key')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Remove a schedule with its waiting occurrence (a running one finishes)' })
  @ApiScheduleKeyParam()
  @ApiNoContentResponse()
  @ApiNotFoundResponse({ type: ErrorBody, description: 'No schedule by that key' })
  async remove(
    @Param('queue', QueueNamePipe) queue: string,
    @Param('key', ScheduleKeyPipe) key: string,
  ): Promise<void> {
    if (!(await this.queues.removeSchedule(queue, key))) {
      throw new NotFoundException(`No schedule '${key}' in queue ${queue}`);
    }
  }
}
