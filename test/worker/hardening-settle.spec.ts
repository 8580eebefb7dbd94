import type { INestApplication } from '@nestjs/common';
import { QueueService } from '@app/echomq';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { closeAll, deferred, loopOf, processorClass, withTimeout } from './fixtures/support';

/**
 * Issue 8, item 9: what a job's settlement does when user code around it throws. A custom
 * backoff function or a worker-event listener is user code too, and neither may leave a job
 * unsettled or change the outcome Redis recorded.
 */
const apps: INestApplication[] = [];

async function boot(providers: Parameters<typeof bootApp>[0], queue: string, maxAttempts = 3) {
  const app = await bootApp(providers, { shutdownGraceMs: 300, queues: { [queue]: { maxAttempts } } });
  apps.push(app);
  return app;
}

afterEach(async () => {
  await closeAll(apps.splice(0));
});

describe('settling around user code that throws', () => {
  it('fails the attempt with the handler’s error, noting the backoff’s, when a custom backoff throws', async () => {
    const queue = uniqueQueue('backoff-throws');
    const Proc = processorClass(
      queue,
      {
        // The default 30 s lease: if the failure is not settled, nothing brings the job back within the test.
        retainCompletedMs: 60_000,
        backoff: {
          type: 'custom',
          delay: () => {
            throw new Error('no delay today');
          },
        },
      },
      (job) => {
        if (job.attempt === 1) throw new Error('the handler broke');
        return { attempt: job.attempt };
      },
    );
    const app = await boot([Proc], queue);
    const queues = app.get(QueueService);
    const failed = deferred<{ error: unknown; state: string }>();
    loopOf(app, queue).events.on('failed', (_, error, state) => failed.resolve({ error, state }));

    const id = await queues.enqueue(queue, {});

    const failure = await withTimeout(failed.promise, 10_000, 'the first attempt’s failure to be recorded');
    expect(failure.error).toMatchObject({ message: 'the handler broke' });
    // No delay could be computed: the retry waits none, straight back to pending.
    expect(failure.state).toBe('pending');
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toEqual({ attempt: 2 });
    const view = await queues.getJob(queue, id);
    expect(view).toMatchObject({ state: 'completed', attempts: 2 });
    expect(view?.lastError).toBe('Error: the handler broke; backoff failed: Error: no delay today');
  });

  it('keeps a completion that Redis recorded when a worker-event listener throws, and still calls the other listeners', async () => {
    const queue = uniqueQueue('listener-throws');
    const Proc = processorClass(queue, { retainCompletedMs: 60_000 }, () => 'done');
    const app = await boot([Proc], queue);
    const queues = app.get(QueueService);
    const loop = loopOf(app, queue);
    const stale: string[] = [];
    const laterListener = deferred<string>();
    loop.events.on('completed', () => {
      throw new Error('a listener broke');
    });
    loop.events.on('completed', (id) => laterListener.resolve(id));
    loop.events.on('stale', (id) => stale.push(id));

    const id = await queues.enqueue(queue, {});

    // The later listener runs after the throwing one, in the same emit: once it has, the
    // settlement is over (a retry of the completion would have had to come first).
    await expect(withTimeout(laterListener.promise, 10_000, 'the later listener')).resolves.toBe(id);
    expect(stale).toEqual([]);
    expect(loop.runner.staleSettlements).toBe(0);
    expect(await queues.getJob(queue, id)).toMatchObject({ state: 'completed', attempts: 1, result: 'done' });
    const metrics = await queues.metrics(queue);
    expect(metrics.completed).toBe(1);
    expect(metrics.stale ?? 0).toBe(0);
  });
});
