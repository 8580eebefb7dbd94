import { RECENT_COMPLETED_DEFAULT, RECENT_COMPLETED_MAX } from '@app/echomq/internal';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ANY_JSON } from './any-json';
import { digitsToNumber, IsIntegerInRange, Optional } from './validators';

/** Query of GET /queues/:queue/completed. Query strings are text, so limit is converted explicitly. */
export class RecentCompletedQuery {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: RECENT_COMPLETED_MAX,
    default: RECENT_COMPLETED_DEFAULT,
  })
  @Optional()
  @Transform(digitsToNumber)
  @IsIntegerInRange(1, RECENT_COMPLETED_MAX)
  readonly limit?: number;
}

export class CompletedJobResponse {
  @ApiProperty({ example: 'JOB0Ah3kPz9QwE' })
  readonly id!: string;

  @ApiProperty({ format: 'date-time', description: 'When it completed, on the Redis server clock' })
  readonly completedAt!: string;

  @ApiPropertyOptional({
    ...ANY_JSON,
    description: 'What the handler returned, when its event carried it (results up to 1 KiB)',
  })
  readonly result?: unknown;
}

export class CompletedListResponse {
  @ApiProperty({
    type: [CompletedJobResponse],
    description: 'Newest first, as far back as the capped event stream reaches',
  })
  readonly jobs!: CompletedJobResponse[];
}
