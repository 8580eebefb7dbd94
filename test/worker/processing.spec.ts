import type { INestApplication, Provider } from '@nestjs/common';
import { once } from 'node:events';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import {
  EchoMqModule,
  Handle,
  JobFailedError,
  Processor,
  ProcessorDefinitionError,
  ProcessorExplorer,
  QueueService,
  Reaper,
  RedisConnections,
  type Job,
} from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { redisUrl, uniqueQueue } from '../support/redis';
import { closeAll, loopOf, processorClass } from './fixtures/support';

const apps: INestApplication[] = [];

async function boot(...args: Parameters<typeof bootApp>): Promise<INestApplication> {
  const app = await bootApp(args[0], { shutdownGraceMs: 500, ...args[1] });
  apps.push(app);
  return app;
}

afterEach(async () => {
  await closeAll(apps.splice(0));
});

/**
 * Handlers that record how many of them run at once. Each one holds until `limit`
 * are in flight together (or every job has started, for the tail), then all the
 * waiting ones finish: so if the loop can reach `limit` it must, and it is never
 * given a chance to hide an overrun behind handlers that finish early.
 */
function concurrencyProbe(limit: number, total: number) {
  let inFlight = 0;
  let started = 0;
  let waiting: (() => void)[] = [];
  const probe = {
    maxInFlight: 0,
    maxLoopInFlight: 0,
    loopInFlight: (): number => 0,
    handler: async (job: Job): Promise<unknown> => {
      inFlight += 1;
      started += 1;
      probe.maxInFlight = Math.max(probe.maxInFlight, inFlight);
      probe.maxLoopInFlight = Math.max(probe.maxLoopInFlight, probe.loopInFlight());
      const gate = new Promise<void>((resolve) => waiting.push(resolve));
      if (inFlight >= limit || started >= total) {
        const release = waiting;
        waiting = [];
        for (const open of release) open();
      }
      await gate;
      inFlight -= 1;
      return job.data;
    },
  };
  return probe;
}

describe('processing', () => {
  it('completes an enqueued job with the handler’s result', async () => {
    const queue = uniqueQueue('proc');
    const Proc = processorClass(queue, { retainCompletedMs: 60_000 }, (job: Job<{ n: number }>) => ({
      doubled: job.data.n * 2,
      attempt: job.attempt,
    }));
    const app = await boot([Proc]);
    const queues = app.get(QueueService);

    const id = await queues.enqueue(queue, { n: 21 });

    await expect(queues.waitFor(queue, id, 10_000)).resolves.toEqual({ doubled: 42, attempt: 1 });
    const view = await queues.getJob(queue, id);
    expect(view).toMatchObject({ state: 'completed', result: { doubled: 42, attempt: 1 }, attempts: 1 });
    expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
  });

  it('routes named jobs to @Handle methods and the rest to process()', async () => {
    const queue = uniqueQueue('route');

    @Processor(queue, { retainCompletedMs: 60_000 })
    class RoutingProcessor {
      @Handle('resize')
      resize(job: Job<string>) {
        return `resize:${job.data}:${job.name}`;
      }

      @Handle('crop')
      crop(job: Job<string>) {
        return `crop:${job.data}`;
      }

      process(job: Job<string>) {
        return `process:${job.data}:${job.name}`;
      }
    }

    const app = await boot([RoutingProcessor]);
    const queues = app.get(QueueService);
    const [resize, crop, other, unnamed] = await queues.enqueueMany(queue, [
      { data: 'a', name: 'resize' },
      { data: 'b', name: 'crop' },
      { data: 'c', name: 'rotate' },
      { data: 'd' },
    ]);

    await expect(queues.waitFor(queue, resize, 10_000)).resolves.toBe('resize:a:resize');
    await expect(queues.waitFor(queue, crop, 10_000)).resolves.toBe('crop:b');
    await expect(queues.waitFor(queue, other, 10_000)).resolves.toBe('process:c:rotate');
    await expect(queues.waitFor(queue, unnamed, 10_000)).resolves.toBe('process:d:');
  });

  it('sends a job whose name has no handler (and no process fallback) to dead at once', async () => {
    const queue = uniqueQueue('nohandler');
    const handled: string[] = [];

    @Processor(queue, { maxAttempts: 5, retainCompletedMs: 60_000 })
    class OnlyNamedProcessor {
      @Handle('known')
      known(job: Job) {
        handled.push(job.id);
        return 'ok';
      }
    }

    const app = await boot([OnlyNamedProcessor]);
    const queues = app.get(QueueService);
    const known = await queues.enqueue(queue, {}, { name: 'known' });
    const unknown = await queues.enqueue(queue, {}, { name: 'mystery' });

    await expect(queues.waitFor(queue, known, 10_000)).resolves.toBe('ok');
    const failure = await queues.waitFor(queue, unknown, 10_000).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(JobFailedError);
    expect((failure as JobFailedError).lastError).toMatch(/no handler for job name 'mystery'/);
    const view = await queues.getJob(queue, unknown);
    // Unrecoverable: no retry could ever find a handler, so the budget of 5 is not spent.
    expect(view).toMatchObject({ state: 'dead', attempts: 1 });
    expect(view?.lastError).toMatch(/^UnrecoverableError: .*'mystery'/);
    expect(handled).toEqual([known]);
  });

  it('never runs more than `concurrency` jobs at once, and does reach it', async () => {
    const queue = uniqueQueue('conc');
    const limit = 4;
    const total = 5 * limit;
    const probe = concurrencyProbe(limit, total);
    const Proc = processorClass(queue, { concurrency: limit, retainCompletedMs: 60_000 }, probe.handler);
    const app = await boot([Proc]);
    const loop = loopOf(app, queue);
    probe.loopInFlight = () => loop.inFlight;
    const queues = app.get(QueueService);

    const ids = await queues.enqueueMany(
      queue,
      Array.from({ length: total }, (_, n) => ({ data: n })),
    );
    const results = await Promise.all(ids.map((id) => queues.waitFor(queue, id, 15_000)));

    expect(results).toEqual(Array.from({ length: total }, (_, n) => n));
    expect(probe.maxInFlight).toBeLessThanOrEqual(limit);
    expect(probe.maxLoopInFlight).toBeLessThanOrEqual(limit);
    expect(probe.maxInFlight).toBe(limit);
  });

  it('applies per-queue options from forRoot when the decorator gives none, and decorator options win', async () => {
    const configured = uniqueQueue('cfg');
    const overridden = uniqueQueue('ovr');
    const limit = 2;
    const probe = concurrencyProbe(limit, 5 * limit);
    const FromConfig = processorClass(configured, { retainCompletedMs: 60_000 }, probe.handler);
    const FromDecorator = processorClass(overridden, { concurrency: 7 }, () => 'ok');
    const app = await boot([FromConfig, FromDecorator], {
      defaults: { maxAttempts: 6 },
      queues: {
        [configured]: { concurrency: limit, leaseMs: 4_000 },
        [overridden]: { concurrency: 3, leaseMs: 5_000 },
      },
    });

    const loop = loopOf(app, configured);
    expect(loop.options).toMatchObject({ concurrency: limit, leaseMs: 4_000, maxAttempts: 6 });
    expect(loopOf(app, overridden).options).toMatchObject({ concurrency: 7, leaseMs: 5_000, maxAttempts: 6 });

    probe.loopInFlight = () => loop.inFlight;
    const queues = app.get(QueueService);
    const ids = await queues.enqueueMany(
      configured,
      Array.from({ length: 5 * limit }, (_, n) => ({ data: n })),
    );
    await Promise.all(ids.map((id) => queues.waitFor(configured, id, 15_000)));
    expect(probe.maxInFlight).toBe(limit);
    expect(probe.maxLoopInFlight).toBeLessThanOrEqual(limit);
  });

  it('boots with forRootAsync and a factory that reads ConfigService', async () => {
    const queue = uniqueQueue('async');
    const Proc = processorClass(queue, { retainCompletedMs: 60_000 }, (job) => ({ got: job.data }));
    const moduleRef = await Test.createTestingModule({
      imports: [
        EchoMqModule.forRootAsync({
          imports: [
            ConfigModule.forRoot({
              ignoreEnvFile: true,
              load: [() => ({ echomq: { url: redisUrl(), concurrency: 3 } })],
            }),
          ],
          inject: [ConfigService],
          useFactory: (config: ConfigService) => ({
            connection: { url: config.getOrThrow<string>('echomq.url') },
            queues: { [queue]: { concurrency: config.getOrThrow<number>('echomq.concurrency') } },
            reaper: { intervalMs: 100 },
            shutdownGraceMs: 500,
          }),
        }),
      ],
      providers: [Proc],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: ['error'] });
    apps.push(app);
    await app.init();

    expect(loopOf(app, queue).options.concurrency).toBe(3);
    const queues = app.get(QueueService);
    const id = await queues.enqueue(queue, 'hello');
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toEqual({ got: 'hello' });
  });

  it('runs no claim loop (and no reaper) in a producer-only app; its jobs wait for a worker', async () => {
    const queue = uniqueQueue('producer');
    const producer = await boot([]);
    const queues = producer.get(QueueService);

    expect(producer.get(ProcessorExplorer).loop(queue)).toBeUndefined();
    expect(producer.get(Reaper).running).toBe(false);

    const id = await queues.enqueue(queue, { to: 'a@example.com' });
    expect(await queues.getJob(queue, id)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(await queues.counts(queue)).toEqual({ pending: 1, active: 0, schedule: 0, dead: 0 });

    // A worker started later takes it on its first claim: nobody claimed it before.
    const Proc = processorClass(queue, { retainCompletedMs: 60_000 }, (job) => job.attempt);
    await boot([Proc]);
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toBe(1);
  });

  describe('bad processor definitions fail the boot', () => {
    async function bootError(providers: Provider[]): Promise<unknown> {
      const moduleRef = await Test.createTestingModule({
        imports: [EchoMqModule.forRoot({ connection: { url: redisUrl() } })],
        providers,
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      const connections = app.get(RedisConnections);
      try {
        await app.init();
        return undefined;
      } catch (error) {
        // A failed boot leaves no connection open (Nest runs no shutdown hooks then): the
        // client has sent QUIT and ends once Redis closes the socket.
        if (connections.client.status !== 'end') await once(connections.client, 'end');
        expect(connections.client.status).toBe('end');
        return error;
      } finally {
        await app.close();
      }
    }

    it('two @Processor classes for one queue', async () => {
      const queue = uniqueQueue('twice');

      @Processor(queue)
      class FirstProcessor {
        process() {
          return 1;
        }
      }

      @Processor(queue)
      class SecondProcessor {
        process() {
          return 2;
        }
      }

      const error = await bootError([FirstProcessor, SecondProcessor]);
      expect(error).toBeInstanceOf(ProcessorDefinitionError);
      expect((error as Error).message).toMatch(
        new RegExp(`Two processors serve queue '${queue}'.*(FirstProcessor|SecondProcessor)`),
      );
    });

    it('a class with neither process() nor @Handle methods', async () => {
      const queue = uniqueQueue('empty');

      @Processor(queue)
      class HandlerlessProcessor {
        helper() {
          return 'not a handler';
        }
      }

      const error = await bootError([HandlerlessProcessor]);
      expect(error).toBeInstanceOf(ProcessorDefinitionError);
      expect((error as Error).message).toBe(
        `HandlerlessProcessor is a @Processor('${queue}') but has no process(job) method and no @Handle methods`,
      );
    });

    it('out-of-range options', async () => {
      const queue = uniqueQueue('badopts');
      const error = await bootError([processorClass(queue, { concurrency: 0 }, () => 1)]);
      expect(error).toBeInstanceOf(ProcessorDefinitionError);
      expect((error as Error).message).toMatch(new RegExp(`Queue '${queue}': concurrency must be`));
    });
  });
});
