import 'reflect-metadata';
import { Inject, Module, type DynamicModule, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EchoMqModule, Processor, ProcessorExplorer, QueueService, type Job } from '@app/echomq/internal';
import type { JobData } from '../support/payload';
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
/** The benchmark's processor: a no-op async handler that reports its start. */
@Processor(BENCH_QUEUE)
class BenchProcessor {
  constructor(@Inject(HOOKS) private readonly hooks: WorkerHooks) {}

  async process(job: Job<JobData>): Promise<void> {
    this.hooks.onStart(job.data);
  }
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
          queues: {
            [BENCH_QUEUE]: {
              concurrency: options.concurrency,
              retainCompletedMs: 0,
            },
          },
        }),
      ],
      providers: [BenchProcessor, { provide: HOOKS, useValue: hooks }],
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

  async enqueueBulk(batch: readonly JobData[]): Promise<void> {
    await this.queues.enqueueMany(
      BENCH_QUEUE,
      batch.map((data) => ({ data })),
    );
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

/** The claim loop's worker events: 'completed' fires once Redis recorded the completion. */
function reportCompletions(app: INestApplicationContext, hooks: WorkerHooks): void {
  const loop = app.get(ProcessorExplorer).loop(BENCH_QUEUE);
  if (!loop) throw new Error(`EchoMQ runs no claim loop for ${BENCH_QUEUE}`);
  if (loop.inFlight > 0) throw new Error('EchoMQ started jobs before the completion listener was attached');
  loop.events.on('completed', () => hooks.onComplete());
}

export const echomq: QueueSystem = {
  id: 'echomq',
  label: 'EchoMQ',
  settings: [
    'producer: QueueService in a Nest application context (EchoMqModule.forRoot, no processors); enqueue() per job, enqueueMany() per batch',
    'worker: a @Processor class (async process() { }) in its own Nest application context, queues.bench = { concurrency, retainCompletedMs: 0 }; other options at their defaults (maxAttempts 3, lease 30 s, reaper every 1 s)',
    "producer-side completion (latency figure only): QueueService.waitFor(queue, id) after enqueue resolves; the queue's event reader is started before the first job",
  ],
  openProducer: (url, options) => EchoMqProducer.open(url, options),

  async startWorker(url: string, options: WorkerOptions, hooks: WorkerHooks): Promise<RunningWorker> {
    // EchoMQ always records events on its stream; `events` only decides whether completed rows are retained.
    const app = await createContext(EchoMqBenchModule.worker(url, options, hooks));
    reportCompletions(app, hooks);
    return { close: () => app.close() };
  },
};
