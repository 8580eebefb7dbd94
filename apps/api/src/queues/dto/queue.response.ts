import { ApiProperty } from '@nestjs/swagger';

export class QueueCountsResponse {
  @ApiProperty() readonly pending!: number;
  @ApiProperty() readonly active!: number;
  @ApiProperty() readonly schedule!: number;
  @ApiProperty() readonly dead!: number;
}

export class QueueSummaryResponse {
  @ApiProperty({ example: 'emails' })
  readonly queue!: string;

  @ApiProperty({ type: QueueCountsResponse })
  readonly counts!: QueueCountsResponse;
}

export class QueueListResponse {
  @ApiProperty({
    type: [QueueSummaryResponse],
    description:
      'Every queue ever enqueued to or served, by name (a partitioned queue once, its depths summed)',
  })
  readonly queues!: QueueSummaryResponse[];
}

export class QueueDetailResponse extends QueueSummaryResponse {
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'number' },
    description: 'Transition counters (enqueued, claimed, completed, failed, ...)',
    example: { enqueued: 12, completed: 10 },
  })
  readonly metrics!: Record<string, number>;

  @ApiProperty({ description: 'Workers claim nothing from a paused queue; enqueue keeps working' })
  readonly paused!: boolean;

  @ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    description:
      "Until when the whole queue is held back by a handler's RateLimitedError (Redis server clock); " +
      'null when it is not. Pending jobs with paused false and nothing claimed: look here',
    example: null,
  })
  readonly heldUntil!: string | null;

  @ApiProperty({
    description:
      'The partitions new jobs of the queue spread over (docs/partitions.md); 1 for an unpartitioned ' +
      'queue. Every field above covers all of them, and the partitions of a count lowered meanwhile',
    example: 1,
    minimum: 1,
    maximum: 16,
  })
  readonly partitions!: number;
}

export class PauseStateResponse {
  @ApiProperty({ example: 'emails' })
  readonly queue!: string;

  @ApiProperty()
  readonly paused!: boolean;
}
