import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, ValidateNested } from 'class-validator';
import { ENQUEUE_MANY_MAX } from '@app/echomq/internal';
import { EnqueueJobDto } from './enqueue-job.dto';

/** Most jobs one bulk request takes: what one enqueue script call takes (all or nothing). */
export const BULK_MAX = ENQUEUE_MANY_MAX;

export class EnqueueBulkDto {
  @ApiProperty({ type: [EnqueueJobDto], minItems: 1, maxItems: BULK_MAX })
  // Listed widest-last: class-validator checks bottom-up and stops at the first failure,
  // so "jobs must be an array" comes before any size message.
  @ArrayMaxSize(BULK_MAX)
  @ArrayMinSize(1)
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => EnqueueJobDto)
  readonly jobs!: EnqueueJobDto[];
}
