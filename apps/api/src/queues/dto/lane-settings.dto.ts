import { LANE_SETTING_RANGES } from '@app/echomq/internal';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIntegerInRangeOrNull, Optional } from './validators';

/** The library's ranges (setLane's own); a lane's share of claims is its weight over the sum. */
const WEIGHT = LANE_SETTING_RANGES.weight;
const CONCURRENCY = LANE_SETTING_RANGES.concurrency;

/** Body of PUT /queues/:queue/lanes/:lane. A field left out keeps its stored value; null clears it. */
export class LaneSettingsDto {
  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: WEIGHT.min,
    maximum: WEIGHT.max,
    description: "The lane's share of claims against the other lanes of its level (default 1)",
    example: 3,
  })
  @Optional()
  @IsIntegerInRangeOrNull(WEIGHT.min, WEIGHT.max)
  readonly weight?: number | null;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: CONCURRENCY.min,
    maximum: CONCURRENCY.max,
    description: "At most this many of the lane's jobs active at once; overrides the queue's laneConcurrency",
    example: 2,
  })
  @Optional()
  @IsIntegerInRangeOrNull(CONCURRENCY.min, CONCURRENCY.max)
  readonly concurrency?: number | null;
}
