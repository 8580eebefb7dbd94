import 'reflect-metadata';
import { Inject, Module, type DynamicModule, type INestApplicationContext, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EchoMqModule, Processor, ProcessorExplorer, QueueService, type Job } from '@app/echomq/internal';
import { SCRIPTS } from '@app/echomq/scripts/registry';
import { ENQUEUE_MANY_MAX } from '@app/echomq/scripts/limits';
import type { JobData } from '../support/payload';
import { namesBySha } from '../support/script-names';
import {
  BENCH_QUEUE,
  type Producer,
  type ProducerOptions,
  type QueueSystem,
  type RunningWorker,
  type WorkerHooks,
  type WorkerOptions,
} from './types';

const HOOKS = Symbol('bench:echomq-hooks');
const WAIT_TIMEOUT_MS = 60_000;
/**
 * Completed rows are kept this long only when a producer waits for completions
 * (the latency figure): QueueService.waitFor on a job that already finished,
 * without a retained row, rejects with JobNotFoundError. Under load the producer
 * can read the job's 'completed' event before the enqueue reply, so a wait begun
 * right after enqueue resolves may be too late.
 */
/**
 * The benchmark's processor for one queue: a no-op async handler that reports its start.
 * One class per queue, as an app serving several queues declares them.
 */
function processorFor(queue: string): Type<unknown> {
  @Processor(queue)
  class BenchProcessor {
    constructor(@Inject(HOOKS) private readonly hooks: WorkerHooks) {}

    async process(job: Job<JobData>): Promise<void> {
      this.hooks.onStart(job.data);
    }
  }
  return BenchProcessor;
}

@Module({})
class EchoMqBenchModule {
  static producer(url: string): DynamicModule {
    return {
      module: EchoMqBenchModule,
      imports: [
        EchoMqModule.forRoot({ connection: { url }, queues: { [BENCH_QUEUE]: { retainCompletedMs: 0 } } }),
      ],
    };
  }

  static worker(url: string, options: WorkerOptions, hooks: WorkerHooks): DynamicModule {
    return {
      module: EchoMqBenchModule,
      imports: [
        EchoMqModule.forRoot({
          connection: { url },
          queues: Object.fromEntries(
            options.queues.map((queue) => [
              queue,
              { concurrency: options.concurrency, retainCompletedMs: 0 },
            ]),
          ),
        }),
      ],
      providers: [...options.queues.map(processorFor), { provide: HOOKS, useValue: hooks }],
    };
  }
}

function createContext(module: DynamicModule): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(module, { logger: ['error', 'warn'], abortOnError: false });
}

class EchoMqProducer implements Producer {
  private constructor(
    private readonly app: INestApplicationContext,
    private readonly queues: QueueService,
  ) {}

  static async open(url: string, options: ProducerOptions): Promise<EchoMqProducer> {
    const app = await createContext(EchoMqBenchModule.producer(url));
    const queues = app.get(QueueService);
    if (options.completions) {
      // Start the queue's shared event reader now, so that the first waitFor does not
      // begin after its job already finished (with retainCompletedMs 0 there is no row to read then).
      const unsubscribe = await queues.subscribe(BENCH_QUEUE, () => undefined);
      unsubscribe();
    }
    return new EchoMqProducer(app, queues);
  }

  async enqueue(data: JobData): Promise<void> {
    await this.queues.enqueue(BENCH_QUEUE, data);
  }

  /** One enqueueMany per batch; a batch over ENQUEUE_MANY_MAX goes as several calls at once. */
  async enqueueBulk(batch: readonly JobData[]): Promise<void> {
    const calls: Promise<unknown>[] = [];
    for (let from = 0; from < batch.length; from += ENQUEUE_MANY_MAX) {
      const slice = batch.slice(from, from + ENQUEUE_MANY_MAX);
      calls.push(
        this.queues.enqueueMany(
          BENCH_QUEUE,
          slice.map((data) => ({ data })),
        ),
      );
    }
    await Promise.all(calls);
  }

  async enqueueAndAwait(data: JobData): Promise<void> {
    const id = await this.queues.enqueue(BENCH_QUEUE, data);
    await this.queues.waitFor(BENCH_QUEUE, id, WAIT_TIMEOUT_MS);
  }

  async unfinished(): Promise<number> {
    const counts = await this.queues.counts(BENCH_QUEUE);
    return counts.pending + counts.active + counts.schedule;
  }

  async close(): Promise<void> {
    await this.app.close();
  }
}

/** The claim loops' worker events: 'completed' fires once Redis recorded the completion. */
function reportCompletions(
  app: INestApplicationContext,
  queues: readonly string[],
  hooks: WorkerHooks,
): void {
  const explorer = app.get(ProcessorExplorer);
  for (const queue of queues) {
    const loop = explorer.loop(queue);
    if (!loop) throw new Error(`EchoMQ runs no claim loop for ${queue}`);
    if (loop.inFlight > 0) throw new Error('EchoMQ started jobs before the completion listener was attached');
    loop.events.on('completed', () => hooks.onComplete());
  }
}

export const echomq: QueueSystem = {
  id: 'echomq',
  label: 'EchoMQ',
  settings: [
    'producer: QueueService in a Nest application context (EchoMqModule.forRoot, no processors); enqueue() per job, enqueueMany() per batch',
    'worker: one @Processor class (async process() { }) per queue in its own Nest application context, queues.<name> = { concurrency, retainCompletedMs: 0 }; other options at their defaults (maxAttempts 3, lease 30 s, reaper driven by deadlines, looking at each queue at least every 30 s)',
    "producer-side completion (latency figure only): QueueService.waitFor(queue, id) after enqueue resolves; the queue's event reader is started before the first job",
  ],
  bulkCallMax: ENQUEUE_MANY_MAX,
  scriptNames: () => namesBySha(Object.entries(SCRIPTS).map(([name, script]) => [name, script.lua] as const)),
  openProducer: (url, options) => EchoMqProducer.open(url, options),

  async startWorker(url: string, options: WorkerOptions, hooks: WorkerHooks): Promise<RunningWorker> {
    // EchoMQ always records events on its stream; `events` only decides whether completed rows are retained.
    const app = await createContext(EchoMqBenchModule.worker(url, options, hooks));
    reportCompletions(app, options.queues, hooks);
    return { close: () => app.close() };
  },
};
