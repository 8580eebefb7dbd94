import { Queue, QueueEvents, Worker, type ConnectionOptions } from 'bullmq';
import { CompletionTracker } from '../support/completion-tracker';
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

const JOB_NAME = 'job';

function connection(url: string): ConnectionOptions {
  const { hostname, port } = new URL(url);
  return { host: hostname, port: Number(port) };
}

class BullMqProducer implements Producer {
  private readonly tracker = new CompletionTracker();

  private constructor(
    private readonly queue: Queue,
    private readonly events?: QueueEvents,
  ) {
    events?.on('completed', ({ jobId }) => this.tracker.notify(jobId));
  }

  static async open(url: string, options: ProducerOptions): Promise<BullMqProducer> {
    const queue = new Queue(BENCH_QUEUE, {
      connection: connection(url),
      defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
    });
    await queue.waitUntilReady();
    let events: QueueEvents | undefined;
    if (options.completions) {
      events = new QueueEvents(BENCH_QUEUE, { connection: connection(url) });
      await events.waitUntilReady();
    }
    return new BullMqProducer(queue, events);
  }

  async enqueue(data: JobData): Promise<void> {
    await this.queue.add(JOB_NAME, data);
  }

  async enqueueBulk(batch: readonly JobData[]): Promise<void> {
    await this.queue.addBulk(batch.map((data) => ({ name: JOB_NAME, data })));
  }

  async enqueueAndAwait(data: JobData): Promise<void> {
    if (!this.events) throw new Error('BullMQ producer opened without completions');
    const job = await this.queue.add(JOB_NAME, data);
    await this.tracker.completion(job.id!);
  }

  async unfinished(): Promise<number> {
    const counts = await this.queue.getJobCounts('wait', 'active', 'delayed', 'prioritized');
    return Object.values(counts).reduce((sum, count) => sum + count, 0);
  }

  async close(): Promise<void> {
    await this.events?.close();
    await this.queue.close();
  }
}

export const bullmq: QueueSystem = {
  id: 'bullmq',
  label: 'BullMQ',
  settings: [
    'producer: Queue with defaultJobOptions { removeOnComplete: true, removeOnFail: true }; add() per job, addBulk() per batch',
    'worker: Worker(queue, async () => { }, { concurrency }); other options at their defaults (lockDuration 30 s, stalledInterval 30 s, drainDelay 5 s)',
    'producer-side completion (latency figure only): one QueueEvents, its global "completed" listener matched to job ids; no QueueEvents anywhere else',
  ],
  openProducer: (url, options) => BullMqProducer.open(url, options),

  async startWorker(url: string, options: WorkerOptions, hooks: WorkerHooks): Promise<RunningWorker> {
    // BullMQ always writes its event stream; there is no switch, so `events` changes nothing.
    const worker = new Worker<JobData>(
      BENCH_QUEUE,
      async (job) => {
        hooks.onStart(job.data);
      },
      { connection: connection(url), concurrency: options.concurrency },
    );
    worker.on('completed', () => hooks.onComplete());
    worker.on('error', (error) => console.error(`BullMQ worker: ${error.message}`));
    await worker.waitUntilReady();
    return { close: () => worker.close() };
  },
};
