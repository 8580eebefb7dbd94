import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ANY_JSON } from './any-json';

export class ScheduleSpecResponse {
  @ApiPropertyOptional({ example: '0 3 * * *' })
  readonly cron?: string;

  @ApiPropertyOptional({ example: 'Europe/Berlin' })
  readonly tz?: string;

  @ApiPropertyOptional({ type: 'integer', example: 60_000 })
  readonly everyMs?: number;
}

export class ScheduleOptionsResponse {
  @ApiProperty({ enum: ['once', 'skip'] })
  readonly missed!: 'once' | 'skip';

  @ApiProperty({ type: 'integer', example: 60_000 })
  readonly missedAfterMs!: number;
}

export class ScheduleTemplateResponse {
  @ApiPropertyOptional({ ...ANY_JSON })
  readonly data?: unknown;

  @ApiPropertyOptional()
  readonly name?: string;

  @ApiPropertyOptional({ type: 'integer' })
  readonly maxAttempts?: number;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  readonly backoff?: object;

  @ApiPropertyOptional()
  readonly lane?: string;

  @ApiPropertyOptional({ type: 'integer' })
  readonly priority?: number;

  @ApiPropertyOptional({ type: 'integer' })
  readonly timeoutMs?: number;
}

/** A schedule with its next occurrence. */
export class ScheduleResponse {
  @ApiProperty({ example: 'nightly-report' })
  readonly key!: string;

  @ApiProperty({ type: () => ScheduleSpecResponse })
  readonly spec!: ScheduleSpecResponse;

  @ApiProperty({ type: () => ScheduleOptionsResponse })
  readonly options!: ScheduleOptionsResponse;

  @ApiProperty({ type: () => ScheduleTemplateResponse })
  readonly template!: ScheduleTemplateResponse;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description: 'Run-at of the next occurrence while it waits; null while it runs',
  })
  readonly nextRunAt!: string | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    example: 'JOB0Ah3kPz9QwE',
    description: 'Id of the next occurrence',
  })
  readonly nextId!: string | null;
}

export class ScheduleListResponse {
  @ApiProperty({ type: () => [ScheduleResponse] })
  readonly schedules!: ScheduleResponse[];
}

export class UpsertScheduleResponse {
  @ApiProperty({ enum: ['created', 'updated', 'unchanged'] })
  readonly outcome!: 'created' | 'updated' | 'unchanged';

  @ApiProperty({ type: 'string', format: 'date-time' })
  readonly nextRunAt!: string;

  @ApiProperty({ example: 'JOB0Ah3kPz9QwE' })
  readonly nextId!: string;
}
