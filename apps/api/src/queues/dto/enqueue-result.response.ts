import type { EnqueueOutcomeKind } from '@app/echomq';
import { ApiProperty } from '@nestjs/swagger';
import { EnqueuedJobResponse } from './job.response';

const OUTCOMES: readonly EnqueueOutcomeKind[] = ['created', 'matched', 'replaced'];

/** The answer to POST /queues/:queue/jobs: the job that will run, its state, and what the call did. */
export class SubmittedJobResponse extends EnqueuedJobResponse {
  @ApiProperty({
    enum: OUTCOMES,
    description:
      'created: a new job. matched: an existing job, whose id is returned (its idempotency key or throttle ' +
      'window held it). replaced: a waiting debounced job, whose data was replaced and run-at pushed back. ' +
      'The status is 201 for all three',
    example: 'created',
  })
  readonly outcome!: EnqueueOutcomeKind;
}
