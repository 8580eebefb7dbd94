import type { INestApplication } from '@nestjs/common';
import { once } from 'node:events';
import { Test } from '@nestjs/testing';
import {
  EchoMqModule,
  InvalidOptionError,
  OnWorkerEvent,
  Processor,
  ProcessorExplorer,
  QueueService,
  type Job,
  type WorkerCompletedEvent,
} from '@app/echomq/internal';
import { EchoMqTestKit } from '@app/echomq/testing';
import { bootApp } from '../support/nest';
import { redisUrl, uniqueQueue } from '../support/redis';
import { closeAll, processorClass } from '../worker/fixtures/support';

// startProcessors: false, and the explorer's start/stop of one queue's claim loop that
// the kit's runUntilIdle is built on.

const apps: INestApplication[] = [];

afterEach(async () => {
  await closeAll(apps.splice(0));
});

async function boot(
  queue: string,
  handler: () => unknown,
  startProcessors?: boolean,
): Promise<INestApplication> {
  const app = await bootApp([processorClass(queue, {}, handler)], {
    shutdownGraceMs: 500,
    ...(startProcessors === undefined ? {} : { startProcessors }),
  });
  apps.push(app);
  return app;
}

describe('startProcessors: false', () => {
  it('discovers the processor but claims only between startQueue and stopQueue, as often as asked', async () => {
    const queue = uniqueQueue('manual');
    let calls = 0;
    const app = await boot(queue, () => ++calls, false);
    const explorer = app.get(ProcessorExplorer);
    const queues = app.get(QueueService);
    const loop = explorer.requireLoop(queue);
    expect(explorer.isServing(queue)).toBe(false);

    await queues.enqueue(queue, {});
    expect((await queues.counts(queue)).pending).toBe(1);

    for (const round of [1, 2]) {
      const completed = once(loop.events, 'completed');
      expect(explorer.startQueue(queue)).toBe(loop); // the same loop, and so the same events, every time
      expect(explorer.isServing(queue)).toBe(true);
      await completed;
      await explorer.stopQueue(queue);
      expect(explorer.isServing(queue)).toBe(false);
      expect(calls).toBe(round);
      if (round === 1) await queues.enqueue(queue, {});
    }
    // After a stop, a new job waits: nothing claims it.
    await queues.enqueue(queue, {});
    expect(await queues.counts(queue)).toMatchObject({ pending: 1, active: 0 });
  });

  it('refuses a value that is not a boolean at boot, naming the option', async () => {
    const boot = Test.createTestingModule({
      imports: [EchoMqModule.forRoot({ connection: { url: redisUrl() }, startProcessors: 'false' as never })],
    })
      .compile()
      .then((moduleRef) => moduleRef.createNestApplication({ logger: false }).init());
    const failure = await boot.catch((error) => error);
    expect(failure).toBeInstanceOf(InvalidOptionError);
    expect((failure as InvalidOptionError).option).toBe('startProcessors');
    expect((failure as Error).message).toBe('Option startProcessors: must be true or false, got "false"');
  });

  it('refuses startQueue for a queue no processor of the application serves', async () => {
    const app = await boot(uniqueQueue('manual'), () => 1, false);
    expect(() => app.get(ProcessorExplorer).startQueue('elsewhere')).toThrow(
      "No @Processor serves queue 'elsewhere' in this application",
    );
  });
});

describe('runUntilIdle with processors started at boot (the default)', () => {
  it('waits until the queue is idle and leaves the processor running', async () => {
    const queue = uniqueQueue('auto');
    let calls = 0;
    const app = await boot(queue, () => ++calls);
    const kit = EchoMqTestKit.from(app);
    await app.get(QueueService).enqueueMany(queue, [{ data: 1 }, { data: 2 }]);

    await kit.runUntilIdle(queue);

    expect(calls).toBe(2);
    expect(await kit.enqueued(queue)).toEqual([]);
    expect(app.get(ProcessorExplorer).isServing(queue)).toBe(true);
    const id = await app.get(QueueService).enqueue(queue, { data: 3 });
    await expect(app.get(QueueService).waitFor(queue, id, 10_000)).resolves.toBe(3);
  });
});

describe('runUntilIdle and follow-up jobs', () => {
  it('waits for an async @OnWorkerEvent handler that enqueues the next step before calling the queue idle', async () => {
    const queue = uniqueQueue('chain');
    const steps: number[] = [];

    @Processor(queue)
    class Chain {
      constructor(private readonly queues: QueueService) {}

      process(job: Job<{ step: number }>): number {
        steps.push(job.data.step);
        return job.data.step;
      }

      @OnWorkerEvent('completed')
      async next(event: WorkerCompletedEvent<{ step: number }, number>): Promise<void> {
        // Something asynchronous first, as a real handler does, then the follow-up job.
        await this.queues.counts(queue);
        if (event.result < 5) await this.queues.enqueue(queue, { step: event.result + 1 });
      }
    }

    const app = await bootApp([Chain], { startProcessors: false, shutdownGraceMs: 500 });
    apps.push(app);
    await app.get(QueueService).enqueue(queue, { step: 1 });
    const summary = await EchoMqTestKit.from(app).runUntilIdle(queue);
    expect(steps).toEqual([1, 2, 3, 4, 5]);
    expect(summary.completed).toBe(5);
  });
});
