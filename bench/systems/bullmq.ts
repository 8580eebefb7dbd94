import { createRequire } from 'node:module';
import { Queue, QueueEvents, Worker, type ConnectionOptions, type DefaultJobOptions } from 'bullmq';
import { CompletionTracker } from '../support/completion-tracker';
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

  static async open(
    url: string,
    options: ProducerOptions,
    defaultJobOptions: DefaultJobOptions,
  ): Promise<BullMqProducer> {
    const queue = new Queue(BENCH_QUEUE, { connection: connection(url), defaultJobOptions });
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

/** One Worker per queue, all in this process, as an app serving several queues runs them. */
async function startWorkers(url: string, options: WorkerOptions, hooks: WorkerHooks): Promise<RunningWorker> {
  // BullMQ always writes its event stream; there is no switch, so `events` changes nothing.
  const workers = options.queues.map((queue) => {
    const worker = new Worker<JobData>(
      queue,
      async (job) => {
        hooks.onStart(job.data);
      },
      { connection: connection(url), concurrency: options.concurrency },
    );
    worker.on('completed', () => hooks.onComplete());
    worker.on('error', (error) => console.error(`BullMQ worker: ${error.message}`));
    return worker;
  });
  await Promise.all(workers.map((worker) => worker.waitUntilReady()));
  return { close: async () => void (await Promise.all(workers.map((worker) => worker.close()))) };
}

/** BullMQ's Lua scripts as it defines them on its connections (dist/cjs/scripts: name, content, keys). */
function bullScriptNames(): Map<string, string> {
  const scripts = createRequire(require.resolve('bullmq'))('./scripts') as Record<
    string,
    { readonly name: string; readonly content: string }
  >;
  return namesBySha(Object.values(scripts).map((script) => [script.name, script.content] as const));
}

const COMMON_SETTINGS = [
  'worker: one Worker(queue, async () => { }, { concurrency }) per queue; other options at their defaults (lockDuration 30 s, stalledInterval 30 s, drainDelay 5 s)',
  'producer-side completion (latency figure only): one QueueEvents, its global "completed" listener matched to job ids; no QueueEvents anywhere else',
];

/**
 * BullMQ as it ships (completed and failed jobs kept: `removeOnComplete` and `removeOnFail`
 * default to false) and as a tuned deployment runs it (both true), as two systems.
 */
function bullmqVariant(
  id: 'bullmq' | 'bullmq-remove',
  label: string,
  defaultJobOptions: DefaultJobOptions,
  producerSetting: string,
): QueueSystem {
  return {
    id,
    label,
    settings: [producerSetting, ...COMMON_SETTINGS],
    scriptNames: bullScriptNames,
    openProducer: (url, options) => BullMqProducer.open(url, options, defaultJobOptions),
    startWorker: startWorkers,
  };
}

export const bullmq = bullmqVariant(
  'bullmq',
  'BullMQ (defaults)',
  {},
  'producer: Queue with no defaultJobOptions (completed and failed jobs are kept, the defaults); add() per job, addBulk() per batch',
);

export const bullmqRemove = bullmqVariant(
  'bullmq-remove',
  'BullMQ (removeOnComplete/Fail)',
  { removeOnComplete: true, removeOnFail: true },
  'producer: Queue with defaultJobOptions { removeOnComplete: true, removeOnFail: true }; add() per job, addBulk() per batch',
);
