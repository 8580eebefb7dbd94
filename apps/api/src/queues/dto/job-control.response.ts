import { ApiProperty } from '@nestjs/swagger';

export class DrainedResponse {
  @ApiProperty() readonly queue!: string;
  @ApiProperty({ type: 'integer', description: 'Pending and scheduled jobs removed' })
  readonly removed!: number;
}

export class CleanedResponse {
  @ApiProperty() readonly queue!: string;
  @ApiProperty({ enum: ['pending', 'schedule', 'dead'] }) readonly state!: string;
  @ApiProperty({ type: [String], description: 'The ids removed, in the order removed' })
  readonly ids!: string[];
}

export class ObliteratedResponse {
  @ApiProperty() readonly queue!: string;
  @ApiProperty({ type: 'integer', description: 'Jobs removed' }) readonly removed!: number;
}

export class RetriedAllResponse {
  @ApiProperty() readonly queue!: string;
  @ApiProperty({ type: 'integer', description: 'Dead jobs moved back to pending' }) readonly retried!: number;
}

export class PromotedJobResponse {
  @ApiProperty() readonly id!: string;
  @ApiProperty() readonly queue!: string;
  @ApiProperty({ enum: ['pending'] }) readonly state!: 'pending';
}
