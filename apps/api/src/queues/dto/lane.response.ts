import { ApiProperty } from '@nestjs/swagger';
import { PauseStateResponse } from './queue.response';

/** One lane as GET /queues/:queue/lanes shows it. */
export class LaneResponse {
  @ApiProperty({ example: 'tenant-42' })
  readonly lane!: string;

  @ApiProperty({ description: 'Jobs waiting in the lane, every priority level' })
  readonly pending!: number;

  @ApiProperty({ description: 'Jobs of the lane being worked now' })
  readonly active!: number;

  @ApiProperty({ description: 'Paused: workers claim nothing from the lane; enqueue keeps working' })
  readonly paused!: boolean;

  @ApiProperty({
    description: 'Held back: at its concurrency cap, its rate limit, paused, or throttled by its handler',
  })
  readonly held!: boolean;

  @ApiProperty({ description: "The lane's share of claims (default 1)" })
  readonly weight!: number;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: "The cap in force: the lane's own concurrency, else the queue's laneConcurrency, else null",
  })
  readonly concurrency!: number | null;
}

export class LaneListResponse {
  @ApiProperty({
    type: [LaneResponse],
    description: 'Every lane with pending or active jobs, paused, or with settings of its own, by name',
  })
  readonly lanes!: LaneResponse[];

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string', format: 'date-time' },
    description:
      "Lane -> until when it is held back (Redis server clock), by a handler's RateLimitedError of scope " +
      "lane or by the lane's rate limit; only holds still ahead, soonest first",
    example: { 'tenant-42': '2030-01-01T00:00:30.000Z' },
  })
  readonly holds!: Record<string, string>;
}

export class LanePauseStateResponse extends PauseStateResponse {
  @ApiProperty({ example: 'tenant-42' })
  readonly lane!: string;
}
