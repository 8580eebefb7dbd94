import type { JobBackoffPolicy } from '@app/echomq';
import { DEFAULT_LANE, PRIORITY_MAX, PRIORITY_MIN, QUEUE_OPTION_RANGES } from '@app/echomq/internal';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { LANE_NAME_PATTERN } from '../api-params';
import { ANY_JSON } from './any-json';
import { asSent, DebounceDto, IsDedupe, ThrottleDto } from './enqueue-dedupe.dto';
import {
  IsIntegerInRange,
  IsJobBackoff,
  IsLaneName,
  IsPresent,
  IsRunAt,
  IsStringOfLength,
  Optional,
  RUN_AT_MAX_MS,
} from './validators';

/** Ten years: far enough for any real schedule, near enough to catch unit mistakes (µs for ms). */
export const MAX_DELAY_MS = 315_576_000_000;
export const NAME_MAX = 128;
export const IDEMPOTENCY_KEY_MAX = 256;
/** A job's own budget and timeout take the library's ranges (the timeout: up to seven days), so both refuse alike. */
const MAX_ATTEMPTS = QUEUE_OPTION_RANGES.maxAttempts;
const JOB_TIMEOUT_MS = QUEUE_OPTION_RANGES.timeoutMs;

/** One job to enqueue: the body of POST /queues/:queue/jobs and one item of a bulk request. */
export class EnqueueJobDto {
  @ApiPropertyOptional({
    description: "Routes the job to a @Handle(name) method; absent or '' uses the processor's process()",
    maxLength: NAME_MAX,
    example: 'welcome',
  })
  @Optional()
  @IsStringOfLength(0, NAME_MAX)
  readonly name?: string;

  @ApiProperty({
    ...ANY_JSON,
    description:
      'The payload: any JSON value (null included), stored exactly as sent. Keys named __proto__, ' +
      'constructor or prototype are refused (400), and nesting is limited to 64 levels',
    example: { to: 'ada@example.com' },
  })
  @IsPresent()
  // Take the value exactly as parsed: class-transformer would otherwise rebuild nested
  // objects and drop keys such as "__proto__", changing the payload.
  @Transform(({ obj }: { obj: Record<string, unknown> }) => obj.data)
  readonly data!: unknown;

  @ApiPropertyOptional({
    description: 'Run no earlier than this many ms from now (Redis server clock)',
    type: 'integer',
    minimum: 0,
    maximum: MAX_DELAY_MS,
    example: 5000,
  })
  @Optional()
  @IsIntegerInRange(0, MAX_DELAY_MS)
  readonly delayMs?: number;

  @ApiPropertyOptional({
    description: 'Run no earlier than this instant; wins over delayMs',
    oneOf: [
      { type: 'string', format: 'date-time', example: '2030-01-01T00:00:00Z' },
      { type: 'integer', minimum: 0, maximum: RUN_AT_MAX_MS, description: 'epoch milliseconds' },
    ],
  })
  @Optional()
  @IsRunAt()
  readonly runAt?: string | number;

  @ApiPropertyOptional({
    description: "Attempts per retry budget; defaults to the queue's setting",
    type: 'integer',
    minimum: MAX_ATTEMPTS.min,
    maximum: MAX_ATTEMPTS.max,
    example: 5,
  })
  @Optional()
  @IsIntegerInRange(MAX_ATTEMPTS.min, MAX_ATTEMPTS.max)
  readonly maxAttempts?: number;

  @ApiPropertyOptional({
    description: "Enqueueing again with the same key (within the idempotency TTL) returns the first job's id",
    minLength: 1,
    maxLength: IDEMPOTENCY_KEY_MAX,
    example: 'signup-42',
  })
  @Optional()
  @IsStringOfLength(1, IDEMPOTENCY_KEY_MAX)
  readonly idempotencyKey?: string;

  @ApiPropertyOptional({
    type: DebounceDto,
    description:
      'The job waits delayMs; enqueueing again with the same key while it waits replaces its data (and name, ' +
      'if given) and pushes its run-at back, never past maxWaitMs after the first (outcome "replaced"). ' +
      'Not with idempotencyKey, throttle, delayMs or runAt; not in bulk requests',
  })
  @Optional()
  @Transform(asSent)
  @IsDedupe('debounce')
  readonly debounce?: DebounceDto;

  @ApiPropertyOptional({
    type: ThrottleDto,
    description:
      'At most one job per key per window: enqueueing again within the window returns the first job ' +
      '(outcome "matched"). Not with idempotencyKey or debounce; not in bulk requests',
  })
  @Optional()
  @Transform(asSent)
  @IsDedupe('throttle')
  readonly throttle?: ThrottleDto;

  @ApiPropertyOptional({
    description:
      "The job's own wait before each retry, instead of the serving worker's: " +
      '{ type: "fixed", delayMs } or { type: "exponential", delayMs, maxDelayMs?, jitter? } (delays up to 7 days)',
    type: 'object',
    additionalProperties: true,
    example: { type: 'exponential', delayMs: 1000, maxDelayMs: 60000 },
  })
  @Optional()
  @IsJobBackoff()
  readonly backoff?: JobBackoffPolicy;

  @ApiPropertyOptional({
    description:
      "The lane the job waits in: lanes share the queue's workers fairly (by weight) and can be " +
      `paused or capped one by one. Absent is the lane '${DEFAULT_LANE}'`,
    pattern: LANE_NAME_PATTERN,
    example: 'tenant-42',
  })
  @Optional()
  @IsLaneName()
  readonly lane?: string;

  @ApiPropertyOptional({
    description: 'Higher is claimed first; jobs of one level are claimed in enqueue order',
    type: 'integer',
    minimum: PRIORITY_MIN,
    maximum: PRIORITY_MAX,
    default: 0,
    example: 5,
  })
  @Optional()
  @IsIntegerInRange(PRIORITY_MIN, PRIORITY_MAX)
  readonly priority?: number;

  @ApiPropertyOptional({
    description:
      "This job's own timeout per attempt, instead of the processor's: at the deadline the handler's " +
      'signal aborts and the attempt fails with JOB_TIMEOUT',
    type: 'integer',
    minimum: JOB_TIMEOUT_MS.min,
    maximum: JOB_TIMEOUT_MS.max,
    example: 30000,
  })
  @Optional()
  @IsIntegerInRange(JOB_TIMEOUT_MS.min, JOB_TIMEOUT_MS.max)
  readonly timeoutMs?: number;
}
