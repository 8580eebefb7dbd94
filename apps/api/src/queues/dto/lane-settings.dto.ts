import { LANE_SETTING_RANGES } from '@app/echomq/internal';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { LIMIT_COUNT_MAX } from './rate-limit';
import { IsIntegerInRangeOrNull, Optional } from './validators';

/** Heaviest lane weight (the library's range); a lane's share of claims is its weight over the sum. */
export const LANE_WEIGHT_MAX = LANE_SETTING_RANGES.weight.max;

/** Body of PUT /queues/:queue/lanes/:lane. A field left out keeps its stored value; null clears it. */
export class LaneSettingsDto {
  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: LANE_WEIGHT_MAX,
    description: "The lane's share of claims against the other lanes of its level (default 1)",
    example: 3,
  })
  @Optional()
  @IsIntegerInRangeOrNull(1, LANE_WEIGHT_MAX)
  readonly weight?: number | null;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: LIMIT_COUNT_MAX,
    description: "At most this many of the lane's jobs active at once; overrides the queue's laneConcurrency",
    example: 2,
  })
  @Optional()
  @IsIntegerInRangeOrNull(1, LIMIT_COUNT_MAX)
  readonly concurrency?: number | null;
}
