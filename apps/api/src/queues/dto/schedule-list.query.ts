import { SCHEDULE_LIST_MAX } from '@app/echomq/internal';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { digitsToNumber, IsIntegerInRange, IsStringOfLength, Optional } from './validators';

/** Query of GET /queues/:queue/schedules: a page by key. */
export class ScheduleListQuery {
  @ApiPropertyOptional({
    description: 'Only schedules whose key sorts after this one (the last key of the previous page)',
  })
  @Optional()
  @IsStringOfLength(1, 128)
  readonly after?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: SCHEDULE_LIST_MAX, default: 100 })
  @Optional()
  @Transform(digitsToNumber)
  @IsIntegerInRange(1, SCHEDULE_LIST_MAX)
  readonly limit?: number;
}
