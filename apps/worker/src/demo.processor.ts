import { Logger } from '@nestjs/common';
import { Handle, Processor, UnrecoverableError, type Job } from '@app/echomq';

export const DEMO_QUEUE = 'demo';

/** Sleeps for ms, or rejects at once when the job is aborted (lease lost, removed, shutdown). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The demo queue used by the e2e tests, benchmarks and reliability runs.
 * Completed results are kept for an hour (see worker.module.ts), so a client can
 * read a job back as `completed` with its result.
 */
@Processor(DEMO_QUEUE)
export class DemoProcessor {
  private readonly logger = new Logger(DemoProcessor.name);

  /** echo: returns its data. */
  @Handle('echo')
  echo(job: Job) {
    return job.data;
  }

  /** sleep: waits data.ms (at most a minute), then returns { sleptMs }. */
  @Handle('sleep')
  async sleep(job: Job<{ ms?: number }>) {
    const ms = Math.min(Math.max(Number(job.data?.ms) || 0, 0), 60_000);
    await sleep(ms, job.signal);
    return { sleptMs: ms };
  }

  /** fail: throws until job.attempt > data.failTimes, then returns { attempt }. */
  @Handle('fail')
  fail(job: Job<{ failTimes?: number }>) {
    const failTimes = Number(job.data?.failTimes) || 0;
    if (job.attempt <= failTimes) {
      throw new Error(`demo failure ${job.attempt} of ${failTimes}`);
    }
    return { attempt: job.attempt };
  }

  /** poison: an unrecoverable error, straight to dead. */
  @Handle('poison')
  poison(): never {
    throw new UnrecoverableError('poison job');
  }

  /** Any other name (or none) echoes too, so a bare `{ data }` enqueue shows a result. */
  process(job: Job) {
    this.logger.debug(`job ${job.id} has no named handler; echoing`);
    return job.data;
  }
}
