import type { INestApplication } from '@nestjs/common';
import { once } from 'node:events';
import { ProcessorExplorer, QueueService, RateLimitedError, type Job } from '@app/echomq/internal';
import { EchoMqTestKit, RunTimeoutError } from '@app/echomq/testing';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { closeAll, DeferredMap, processorClass } from '../worker/fixtures/support';

// What runUntilIdle reports beyond completions and failures: throttles (RateLimitedError),
// and handlers that outlived their timeout, which it waits for.

const apps: INestApplication[] = [];
/** Handlers blocked until the test lets them go, by job id; all opened in cleanup. */
const gates = new DeferredMap<void>();

afterEach(async () => {
  gates.resolveAll();
  await closeAll(apps.splice(0));
});

async function boot(
  queue: string,
  handler: (job: Job) => unknown,
  timeoutMs?: number,
): Promise<INestApplication> {
  const options = { maxAttempts: 1, ...(timeoutMs === undefined ? {} : { timeoutMs }) };
  const app = await bootApp([processorClass(queue, options, handler)], {
    startProcessors: false,
    shutdownGraceMs: 300,
  });
  apps.push(app);
  return app;
}

describe('runUntilIdle outcomes', () => {
  it('counts a throttle as its own outcome: the job back in pending, its attempt unspent, then completed', async () => {
    const queue = uniqueQueue('kit-throttle');
    const app = await boot(queue, (job) => {
      if (job.attempt === 1) throw new RateLimitedError(20, { scope: 'lane' });
      return job.attemptInBudget;
    });
    const kit = EchoMqTestKit.from(app);
    const id = await app.get(QueueService).enqueue(queue, {});

    const summary = await kit.runUntilIdle(queue);

    // maxAttempts 1: a failure would have been final; the throttle spent nothing.
    expect(summary).toMatchObject({ completed: 1, failed: 0, dead: 0, stale: 0, throttled: 1 });
    expect(summary.outcomes).toEqual([
      { id, outcome: 'throttled', retryAfterMs: 20, scope: 'lane' },
      { id, outcome: 'completed', result: 1 },
    ]);
  });

  it('waits for a handler that outlived its timeout before calling the queue idle', async () => {
    const queue = uniqueQueue('kit-lingering');
    let returned = false;
    const app = await boot(
      queue,
      async (job) => {
        await gates.get(job.id).promise; // ignores its signal
        returned = true;
      },
      100,
    );
    const kit = EchoMqTestKit.from(app);
    const loop = app.get(ProcessorExplorer).requireLoop(queue);
    // Let the handler go only once its attempt has failed: the queue is drained from then on.
    loop.events.once('failed', (id: string) => gates.get(id).resolve());
    await app.get(QueueService).enqueue(queue, {});

    const summary = await kit.runUntilIdle(queue);

    expect(returned).toBe(true);
    expect(summary).toMatchObject({ completed: 0, failed: 1, dead: 1 });
  });

  it('says in its timeout that it waited for handlers still running after their timeout', async () => {
    const queue = uniqueQueue('kit-lingering-timeout');
    const app = await boot(queue, (job) => gates.get(job.id).promise, 100);
    const kit = EchoMqTestKit.from(app);
    const loop = app.get(ProcessorExplorer).requireLoop(queue);
    const failed = once(loop.events, 'failed');
    await app.get(QueueService).enqueue(queue, {});

    const failure = await kit.runUntilIdle(queue, { timeoutMs: 600 }).catch((error: unknown) => error);

    await failed;
    expect(failure).toBeInstanceOf(RunTimeoutError);
    const { message } = failure as RunTimeoutError;
    expect(message).toContain('0 active, 0 pending, 0 scheduled');
    expect(message).toContain(
      'It waited for 1 handler(s) still running after their attempt timed out: they ignored the abort of job.signal',
    );
  });
});
