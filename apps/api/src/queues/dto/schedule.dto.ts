import type { JobBackoffPolicy } from '@app/echomq';
import { PRIORITY_MAX, PRIORITY_MIN, QUEUE_OPTION_RANGES, SCHEDULE_RANGES } from '@app/echomq/internal';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsObject, ValidateNested } from 'class-validator';
import { ANY_JSON } from './any-json';
import { IsIntegerInRange, IsJobBackoff, IsLaneName, IsStringOfLength, Optional } from './validators';

const NAME_MAX = 128;
const CRON_MAX = 256;

/** The job every occurrence of a schedule is. The library checks it as enqueue checks a job. */
export class ScheduleTemplateDto {
  @ApiPropertyOptional({
    ...ANY_JSON,
    description: "Each occurrence's data (any JSON value)",
    example: { report: 'daily' },
  })
  @Optional()
  readonly data?: unknown;

  @ApiPropertyOptional({ description: 'Routes occurrences to a @Handle(name) method', maxLength: NAME_MAX })
  @Optional()
  @IsStringOfLength(0, NAME_MAX)
  readonly name?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: QUEUE_OPTION_RANGES.maxAttempts.min,
    maximum: QUEUE_OPTION_RANGES.maxAttempts.max,
  })
  @Optional()
  @IsIntegerInRange(QUEUE_OPTION_RANGES.maxAttempts.min, QUEUE_OPTION_RANGES.maxAttempts.max)
  readonly maxAttempts?: number;

  @ApiPropertyOptional({
    description: '{ type: "fixed", delayMs } or { type: "exponential", delayMs, maxDelayMs?, jitter? }',
    type: 'object',
    additionalProperties: true,
  })
  @Optional()
  @IsJobBackoff()
  readonly backoff?: JobBackoffPolicy;

  @ApiPropertyOptional({
    description: 'Lane of every occurrence (default: the default lane)',
    example: 'tenant-42',
  })
  @Optional()
  @IsLaneName()
  readonly lane?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: PRIORITY_MIN, maximum: PRIORITY_MAX })
  @Optional()
  @IsIntegerInRange(PRIORITY_MIN, PRIORITY_MAX)
  readonly priority?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: QUEUE_OPTION_RANGES.timeoutMs.min,
    maximum: QUEUE_OPTION_RANGES.timeoutMs.max,
  })
  @Optional()
  @IsIntegerInRange(QUEUE_OPTION_RANGES.timeoutMs.min, QUEUE_OPTION_RANGES.timeoutMs.max)
  readonly timeoutMs?: number;
}

/**
 * Body of PUT /queues/:queue/schedules/:key: either cron (with tz) or everyMs, the missed-run
 * policy, and the template. Whether the cron pattern parses and the time zone exists is the
 * library's check (a 400 either way).
 */
export class ScheduleDto {
  @ApiPropertyOptional({
    description: 'A cron pattern (5 or 6 fields, or @daily ...)',
    maxLength: CRON_MAX,
    example: '0 3 * * *',
  })
  @Optional()
  @IsStringOfLength(1, CRON_MAX)
  readonly cron?: string;

  @ApiPropertyOptional({
    description: 'IANA time zone the cron pattern is read in (default UTC)',
    example: 'Europe/Berlin',
  })
  @Optional()
  @IsStringOfLength(1, 64)
  readonly tz?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: SCHEDULE_RANGES.everyMs.min,
    maximum: SCHEDULE_RANGES.everyMs.max,
    description: 'Run every this many ms instead of a cron pattern',
    example: 60_000,
  })
  @Optional()
  @IsIntegerInRange(SCHEDULE_RANGES.everyMs.min, SCHEDULE_RANGES.everyMs.max)
  readonly everyMs?: number;

  @ApiPropertyOptional({
    enum: ['once', 'skip'],
    description: "What to do with a run missed while no worker ran (default 'once')",
  })
  @Optional()
  @IsIn(['once', 'skip'])
  readonly missed?: 'once' | 'skip';

  @ApiPropertyOptional({
    type: 'integer',
    minimum: SCHEDULE_RANGES.missedAfterMs.min,
    maximum: SCHEDULE_RANGES.missedAfterMs.max,
    description: "How late an occurrence may be before 'skip' drops it (default 60000)",
  })
  @Optional()
  @IsIntegerInRange(SCHEDULE_RANGES.missedAfterMs.min, SCHEDULE_RANGES.missedAfterMs.max)
  readonly missedAfterMs?: number;

  @ApiPropertyOptional({ type: () => ScheduleTemplateDto })
  @Optional()
  // ValidateNested alone takes an array too (it validates each element): a template is one object.
  @IsObject()
  @ValidateNested()
  @Type(() => ScheduleTemplateDto)
  readonly template?: ScheduleTemplateDto;
}
