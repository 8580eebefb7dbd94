import { BROWSE_MAX, PRIORITY_MAX, PRIORITY_MIN, STATE_SETS, type StateSet } from '@app/echomq/internal';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsString } from 'class-validator';
import { LANE_NAME_PATTERN } from '../api-params';
import { digitsToNumber, IsIntegerInRange, IsLaneName, Optional } from './validators';

export const LIST_DEFAULT_LIMIT = 50;

/**
 * Query of GET /queues/:queue/jobs. Query strings are text, so limit and priority are
 * converted explicitly. lane and priority narrow a pending listing; which states they
 * combine with is checked by the controller (listJobsOptions), where all fields are known.
 */
export class ListJobsQuery {
  @ApiPropertyOptional({ enum: STATE_SETS, default: 'pending' })
  @Optional()
  @IsIn(STATE_SETS)
  readonly state?: StateSet;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: BROWSE_MAX, default: LIST_DEFAULT_LIMIT })
  @Optional()
  @Transform(digitsToNumber)
  @IsIntegerInRange(1, BROWSE_MAX)
  readonly limit?: number;

  @ApiPropertyOptional({
    description: 'pending and dead only: continue after this job id (exclusive), for paging newest first',
    example: 'JOB0Ah3kPz9QwE',
  })
  @Optional()
  @IsString()
  readonly after?: string;

  @ApiPropertyOptional({
    description: "pending only: list this lane's jobs (without it, every lane merged newest first)",
    pattern: LANE_NAME_PATTERN,
    example: 'tenant-42',
  })
  @Optional()
  @IsLaneName()
  readonly lane?: string;

  @ApiPropertyOptional({
    description: 'pending only: the jobs at this priority level (of the lane, when lane is given)',
    type: 'integer',
    minimum: PRIORITY_MIN,
    maximum: PRIORITY_MAX,
  })
  @Optional()
  @Transform(digitsToNumber)
  @IsIntegerInRange(PRIORITY_MIN, PRIORITY_MAX)
  readonly priority?: number;
}
