import { FLOW_LIMIT_RANGES } from '@app/echomq/internal';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsRateLimitOrNull, RateLimitDto } from './rate-limit';
import { IsIntegerInRangeOrNull, Optional } from './validators';

/** The library's ranges, so the api refuses exactly what setLimits would. */
const GLOBAL_CONCURRENCY = FLOW_LIMIT_RANGES.globalConcurrency;
const LANE_CONCURRENCY = FLOW_LIMIT_RANGES.laneConcurrency;

/** Take a nested object exactly as parsed: the validator checks its keys, class-transformer would drop them. */
const asSent = ({ obj, key }: { obj: Record<string, unknown>; key: string }): unknown => obj[key];

/**
 * Body of PUT /queues/:queue/limits: the queue's shared flow limits, stored in Redis so every
 * worker enforces the same. A field left out keeps its stored value; null clears it.
 */
export class FlowLimitsDto {
  @ApiPropertyOptional({
    type: RateLimitDto,
    nullable: true,
    description: 'Queue-wide: at most max claims in any windowMs-long span, all workers together',
  })
  @Optional()
  @Transform(asSent)
  @IsRateLimitOrNull()
  readonly rateLimit?: RateLimitDto | null;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: GLOBAL_CONCURRENCY.min,
    maximum: GLOBAL_CONCURRENCY.max,
    description: 'At most this many jobs of the queue active at once, all workers together',
  })
  @Optional()
  @IsIntegerInRangeOrNull(GLOBAL_CONCURRENCY.min, GLOBAL_CONCURRENCY.max)
  readonly globalConcurrency?: number | null;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: LANE_CONCURRENCY.min,
    maximum: LANE_CONCURRENCY.max,
    description: "At most this many active jobs per lane (a lane's own concurrency overrides it)",
  })
  @Optional()
  @IsIntegerInRangeOrNull(LANE_CONCURRENCY.min, LANE_CONCURRENCY.max)
  readonly laneConcurrency?: number | null;

  @ApiPropertyOptional({
    type: RateLimitDto,
    nullable: true,
    description: 'Each lane: at most max claims in any windowMs-long span',
  })
  @Optional()
  @Transform(asSent)
  @IsRateLimitOrNull()
  readonly laneRateLimit?: RateLimitDto | null;
}

/** The queue's stored flow limits; null where none is set. */
export class FlowLimitsResponse {
  @ApiProperty({ type: RateLimitDto, nullable: true })
  readonly rateLimit!: RateLimitDto | null;

  @ApiProperty({ type: 'integer', nullable: true })
  readonly globalConcurrency!: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  readonly laneConcurrency!: number | null;

  @ApiProperty({ type: RateLimitDto, nullable: true })
  readonly laneRateLimit!: RateLimitDto | null;
}
