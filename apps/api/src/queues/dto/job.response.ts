import { BROWSE_MAX, JOB_LOG_LINES_KEPT, STATE_SETS } from '@app/echomq/internal';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ANY_JSON } from './any-json';

const JOB_STATES = [...STATE_SETS, 'completed'] as const;

export class EnqueuedJobResponse {
  @ApiProperty({ example: 'JOB0Ah3kPz9QwE' })
  readonly id!: string;

  @ApiProperty({ example: 'emails' })
  readonly queue!: string;

  @ApiProperty({
    enum: [...JOB_STATES, 'unknown'],
    description:
      'State right after the call: pending, or schedule when delayed. An idempotent repeat reports ' +
      "the existing job's current state (unknown if it has finished and was not retained)",
  })
  readonly state!: string;
}

export class BulkEnqueuedResponse {
  @ApiProperty({ type: [String], description: 'Job ids in the order the jobs were given' })
  readonly ids!: string[];
}

/** One job as readers see it; the state is the set that holds its id. */
export class JobResponse {
  @ApiProperty({ example: 'JOB0Ah3kPz9QwE' })
  readonly id!: string;

  @ApiProperty({ example: 'emails' })
  readonly queue!: string;

  @ApiProperty({ example: '' })
  readonly name!: string;

  @ApiProperty({ enum: JOB_STATES })
  readonly state!: string;

  @ApiProperty({
    description: "The lane the job waits in ('default' when enqueued without one)",
    example: 'default',
  })
  readonly lane!: string;

  @ApiProperty({ description: 'Priority level, 0 to 9: higher is claimed first', example: 0 })
  readonly priority!: number;

  @ApiProperty({ ...ANY_JSON, description: 'The payload as enqueued (any JSON value)' })
  readonly data!: unknown;

  @ApiProperty({ description: 'Claims so far: the fencing token of the latest claim; never decreases' })
  readonly attempts!: number;

  @ApiProperty({
    description:
      "Attempts per retry budget: the job's own, else the last claiming worker's, else the built-in 3 (docs/options.md)",
  })
  readonly maxAttempts!: number;

  @ApiProperty({ description: 'Whether the job was enqueued with its own maxAttempts' })
  readonly ownMaxAttempts!: boolean;

  @ApiPropertyOptional({
    description: "The job's own backoff, when it was enqueued with one",
    type: 'object',
    additionalProperties: true,
  })
  readonly backoff?: object;

  @ApiPropertyOptional({
    description: "The job's own timeout per attempt in ms, when it was enqueued with one",
    type: 'integer',
  })
  readonly timeoutMs?: number;

  @ApiProperty({ description: 'Attempts left in the current retry budget' })
  readonly attemptsLeft!: number;

  @ApiProperty({ format: 'date-time' })
  readonly enqueuedAt!: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'schedule only: when the job becomes due' })
  readonly runAt?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'active only: when the current lease expires' })
  readonly leaseDeadline?: string;

  @ApiPropertyOptional({ description: "the last failed attempt's error, `Name: message`" })
  readonly lastError?: string;

  @ApiPropertyOptional({ description: "that error's stack trace, when it had one (cut to 8 KiB)" })
  readonly lastErrorStack?: string;

  @ApiPropertyOptional({ ...ANY_JSON, description: 'completed (retained) jobs: what the handler returned' })
  readonly result?: unknown;

  @ApiPropertyOptional({ format: 'date-time' })
  readonly finishedAt?: string;

  @ApiPropertyOptional({ ...ANY_JSON, description: 'The latest progress the handler reported' })
  readonly progress?: unknown;

  @ApiProperty({
    type: [String],
    maxItems: JOB_LOG_LINES_KEPT,
    description: `The job's log (job.log), oldest first: the last ${JOB_LOG_LINES_KEPT} lines written`,
    example: ['connecting to smtp', 'sent'],
  })
  readonly logs!: string[];

  @ApiProperty({
    description: `Log lines written that are no longer kept (only the last ${JOB_LOG_LINES_KEPT} are)`,
    example: 0,
  })
  readonly logsDropped!: number;
}

export class JobListResponse {
  @ApiProperty({
    type: [JobResponse],
    maxItems: BROWSE_MAX,
    description: 'pending and dead newest first; active and schedule soonest deadline / run-at first',
  })
  readonly jobs!: JobResponse[];
}

export class RetriedJobResponse {
  @ApiProperty({ example: 'JOB0Ah3kPz9QwE' })
  readonly id!: string;

  @ApiProperty({ example: 'emails' })
  readonly queue!: string;

  @ApiProperty({ enum: ['pending'] })
  readonly state!: 'pending';
}
