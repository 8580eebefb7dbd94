import {
  CLEAN_AGE_MAX_MS,
  CLEAN_LIMIT_MAX,
  PRIORITY_MAX,
  PRIORITY_MIN,
  RETRY_ALL_MAX,
} from '@app/echomq/internal';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { Allow, IsBoolean, IsIn } from 'class-validator';
import { LANE_NAME_PATTERN } from '../api-params';
import { ANY_JSON } from './any-json';
import { IsIntegerInRange, IsLaneName, IsRunAt, Optional, RUN_AT_MAX_MS } from './validators';

/** Body of POST /queues/:queue/drain (may be empty). */
export class DrainBodyDto {
  @ApiPropertyOptional({
    description: 'Keep scheduled jobs (delayed ones, retries in backoff); default false',
  })
  @Optional()
  @IsBoolean()
  readonly keepScheduled?: boolean;
}

/** Body of POST /queues/:queue/clean. */
export class CleanBodyDto {
  @ApiProperty({
    enum: ['pending', 'schedule', 'dead'],
    description:
      'The state to clean; active jobs are removed one by one, completed rows expire by themselves',
  })
  @IsIn(['pending', 'schedule', 'dead'], {
    message:
      'state must be one of pending, schedule, dead (active jobs: remove them one by one; completed rows expire by retainCompletedMs)',
  })
  readonly state!: 'pending' | 'schedule' | 'dead';

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    maximum: CLEAN_AGE_MAX_MS,
    description: 'Jobs enqueued more than this many ms ago (their id time, Redis server clock)',
    example: 86_400_000,
  })
  @IsIntegerInRange(0, CLEAN_AGE_MAX_MS)
  readonly olderThanMs!: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: CLEAN_LIMIT_MAX,
    description: 'At most this many (default 1,000)',
  })
  @Optional()
  @IsIntegerInRange(1, CLEAN_LIMIT_MAX)
  readonly limit?: number;
}

/** Body of POST /queues/:queue/dead/retry (may be empty). */
export class RetryAllBodyDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: RETRY_ALL_MAX,
    description: 'At most this many; default: as many as dead held when the call began',
  })
  @Optional()
  @IsIntegerInRange(1, RETRY_ALL_MAX)
  readonly limit?: number;
}

/** Body of PATCH /queues/:queue/jobs/:id: what to change of a job that is not active. */
export class UpdateJobDto {
  @ApiPropertyOptional({ ...ANY_JSON, description: 'The new payload: any JSON value, null included' })
  @Allow()
  // Exactly as parsed, as enqueue takes it (class-transformer would rebuild nested objects).
  @Transform(({ obj }: { obj: Record<string, unknown> }) => obj.data)
  readonly data?: unknown;

  @ApiPropertyOptional({
    oneOf: [
      { type: 'string', format: 'date-time' },
      { type: 'integer', minimum: 0, maximum: RUN_AT_MAX_MS },
    ],
    description:
      'Run no earlier than this instant (RFC 3339 or epoch ms); wins over delayMs. At or before now: pending now',
  })
  @Optional()
  @IsRunAt()
  readonly runAt?: string | number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: RUN_AT_MAX_MS,
    description: 'Run this many ms from now; 0: pending now',
  })
  @Optional()
  @IsIntegerInRange(0, RUN_AT_MAX_MS)
  readonly delayMs?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: PRIORITY_MIN, maximum: PRIORITY_MAX })
  @Optional()
  @IsIntegerInRange(PRIORITY_MIN, PRIORITY_MAX)
  readonly priority?: number;

  @ApiPropertyOptional({ pattern: LANE_NAME_PATTERN, example: 'tenant-42' })
  @Optional()
  @IsLaneName()
  readonly lane?: string;
}
