import { BROWSE_MAX, STATE_SETS, type StateSet } from '@app/echomq/internal';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsString } from 'class-validator';
import { IsIntegerInRange, Optional } from './validators';

export const LIST_DEFAULT_LIMIT = 50;

/** Query of GET /queues/:queue/jobs. Query strings are text, so limit is converted explicitly. */
export class ListJobsQuery {
  @ApiPropertyOptional({ enum: STATE_SETS, default: 'pending' })
  @Optional()
  @IsIn(STATE_SETS)
  readonly state?: StateSet;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: BROWSE_MAX, default: LIST_DEFAULT_LIMIT })
  @Optional()
  // Only plain digits become a number; anything else stays text and fails the integer rule.
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^\d{1,7}$/.test(value) ? Number(value) : value,
  )
  @IsIntegerInRange(1, BROWSE_MAX)
  readonly limit?: number;

  @ApiPropertyOptional({
    description: 'pending and dead only: continue after this job id (exclusive), for paging newest first',
    example: 'JOB0Ah3kPz9QwE',
  })
  @Optional()
  @IsString()
  readonly after?: string;
}
