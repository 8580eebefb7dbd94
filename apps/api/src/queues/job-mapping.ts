import type { JobToEnqueue, JobView } from '@app/echomq';
import type { EnqueueJobDto } from './dto/enqueue-job.dto';
import type { JobResponse } from './dto/job.response';
import { runAtToMs } from './dto/validators';

/** A validated request item as the library takes it (runAt normalised to epoch ms). */
export function toJobToEnqueue(dto: EnqueueJobDto): JobToEnqueue {
  return {
    data: dto.data,
    ...(dto.name !== undefined ? { name: dto.name } : {}),
    ...(dto.delayMs !== undefined ? { delayMs: dto.delayMs } : {}),
    ...(dto.runAt !== undefined ? { runAt: runAtToMs(dto.runAt) } : {}),
    ...(dto.maxAttempts !== undefined ? { maxAttempts: dto.maxAttempts } : {}),
    ...(dto.idempotencyKey !== undefined ? { idempotencyKey: dto.idempotencyKey } : {}),
    ...(dto.backoff !== undefined ? { backoff: dto.backoff } : {}),
  };
}

/** The wire form of a job view: dates as ISO strings, optional fields only when set. */
export function toJobResponse(view: JobView): JobResponse {
  return {
    id: view.id,
    queue: view.queue,
    name: view.name,
    state: view.state,
    data: view.data,
    attempts: view.attempts,
    maxAttempts: view.maxAttempts,
    ownMaxAttempts: view.ownMaxAttempts,
    ...(view.backoff ? { backoff: view.backoff } : {}),
    attemptsLeft: view.attemptsLeft,
    enqueuedAt: view.enqueuedAt.toISOString(),
    ...(view.runAt ? { runAt: view.runAt.toISOString() } : {}),
    ...(view.leaseDeadline ? { leaseDeadline: view.leaseDeadline.toISOString() } : {}),
    ...(view.lastError !== undefined ? { lastError: view.lastError } : {}),
    ...('result' in view ? { result: view.result } : {}),
    ...(view.finishedAt ? { finishedAt: view.finishedAt.toISOString() } : {}),
    ...('progress' in view ? { progress: view.progress } : {}),
  };
}
