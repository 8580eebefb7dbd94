import type { BrowseOptions, JobToEnqueue, JobView, StateSet } from '@app/echomq';
import { BadRequestException } from '@nestjs/common';
import type { EnqueueJobDto } from './dto/enqueue-job.dto';
import type { JobResponse } from './dto/job.response';
import { LIST_DEFAULT_LIMIT, type ListJobsQuery } from './dto/list-jobs.query';
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
    ...(dto.lane !== undefined ? { lane: dto.lane } : {}),
    ...(dto.priority !== undefined ? { priority: dto.priority } : {}),
    ...(dto.timeoutMs !== undefined ? { timeoutMs: dto.timeoutMs } : {}),
  };
}

/** The wire form of a job view: dates as ISO strings, optional fields only when set. */
export function toJobResponse(view: JobView): JobResponse {
  return {
    id: view.id,
    queue: view.queue,
    name: view.name,
    state: view.state,
    lane: view.lane,
    priority: view.priority,
    data: view.data,
    attempts: view.attempts,
    maxAttempts: view.maxAttempts,
    ownMaxAttempts: view.ownMaxAttempts,
    ...(view.backoff ? { backoff: view.backoff } : {}),
    ...(view.timeoutMs !== null ? { timeoutMs: view.timeoutMs } : {}),
    attemptsLeft: view.attemptsLeft,
    enqueuedAt: view.enqueuedAt.toISOString(),
    ...(view.runAt ? { runAt: view.runAt.toISOString() } : {}),
    ...(view.leaseDeadline ? { leaseDeadline: view.leaseDeadline.toISOString() } : {}),
    ...(view.lastError !== undefined ? { lastError: view.lastError } : {}),
    ...(view.lastErrorStack !== undefined ? { lastErrorStack: view.lastErrorStack } : {}),
    ...('result' in view ? { result: view.result } : {}),
    ...(view.finishedAt ? { finishedAt: view.finishedAt.toISOString() } : {}),
    ...('progress' in view ? { progress: view.progress } : {}),
    logs: view.logs,
    logsDropped: view.logsDropped,
  };
}

/**
 * A validated listing query as the library's browse options. lane and priority narrow the
 * pending sets only (the other states are not split by lane): refused elsewhere with a 400
 * naming the field, rather than silently ignored.
 */
export function toBrowseOptions(state: StateSet, query: ListJobsQuery): BrowseOptions {
  const problems: string[] = [];
  if (state !== 'pending') {
    if (query.lane !== undefined) problems.push('lane filters pending jobs only; use it with state=pending');
    if (query.priority !== undefined) {
      problems.push('priority filters pending jobs only; use it with state=pending');
    }
  }
  if (problems.length > 0) throw new BadRequestException(problems);
  return {
    limit: query.limit ?? LIST_DEFAULT_LIMIT,
    ...(query.after !== undefined ? { after: query.after } : {}),
    ...(query.lane !== undefined ? { lane: query.lane } : {}),
    ...(query.priority !== undefined ? { priority: query.priority } : {}),
  };
}
