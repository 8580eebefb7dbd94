import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import BeeQueue from 'bee-queue';
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

const CLOSE_TIMEOUT_MS = 10_000;

/** Fair settings shared by both sides: no job objects kept in memory, no delayed-job machinery. */
function settings(url: string, extra: BeeQueue.QueueSettings): BeeQueue.QueueSettings {
  const { hostname, port } = new URL(url);
  return {
    redis: { host: hostname, port: Number(port) },
    removeOnSuccess: true,
    removeOnFailure: true,
    storeJobs: false,
    activateDelayedJobs: false,
    ...extra,
  };
}

class BeeQueueProducer implements Producer {
  private readonly tracker = new CompletionTracker();

  private constructor(
    private readonly queue: BeeQueue<JobData>,
    private readonly completions: boolean,
  ) {
    if (completions) queue.on('job succeeded', (jobId) => this.tracker.notify(jobId));
  }

  static async open(url: string, options: ProducerOptions): Promise<BeeQueueProducer> {
    const queue = new BeeQueue<JobData>(
      BENCH_QUEUE,
      settings(url, { isWorker: false, getEvents: options.completions, sendEvents: false }),
    );
    queue.on('error', (error) => console.error(`Bee-Queue producer: ${error.message}`));
    await queue.ready();
    return new BeeQueueProducer(queue, options.completions);
  }

  async enqueue(data: JobData): Promise<void> {
    await this.queue.createJob(data).save();
  }

  async enqueueBulk(batch: readonly JobData[]): Promise<void> {
    const errors = await this.queue.saveAll(batch.map((data) => this.queue.createJob(data)));
    if (errors.size > 0) throw new Error(`Bee-Queue saveAll: ${errors.size} job(s) failed`);
  }

  async enqueueAndAwait(data: JobData): Promise<void> {
    if (!this.completions) throw new Error('Bee-Queue producer opened without completions');
    const job = await this.queue.createJob(data).save();
    await this.tracker.completion(job.id);
  }

  async unfinished(): Promise<number> {
    const health = await this.queue.checkHealth();
    return health.waiting + health.active + health.delayed;
  }

  async close(): Promise<void> {
    await this.queue.close(CLOSE_TIMEOUT_MS);
  }
}

/** One worker Queue per queue, all in this process. */
async function startWorkers(url: string, options: WorkerOptions, hooks: WorkerHooks): Promise<RunningWorker> {
  const queues = options.queues.map((name) => {
    const queue = new BeeQueue<JobData>(
      name,
      settings(url, { isWorker: true, getEvents: false, sendEvents: options.events }),
    );
    queue.on('error', (error) => console.error(`Bee-Queue worker: ${error.message}`));
    queue.on('succeeded', () => hooks.onComplete());
    return queue;
  });
  await Promise.all(queues.map((queue) => queue.ready()));
  for (const queue of queues) {
    queue.process(options.concurrency, async (job: BeeQueue.Job<JobData>) => {
      hooks.onStart(job.data);
    });
  }
  return {
    close: async () => void (await Promise.all(queues.map((queue) => queue.close(CLOSE_TIMEOUT_MS)))),
  };
}

/** Bee-Queue's scripts: the .lua files of lib/lua, loaded as they are read (lib/lua/index.js). */
function beeScriptNames(): Map<string, string> {
  const dir = join(dirname(require.resolve('bee-queue')), 'lib', 'lua');
  const files = readdirSync(dir).filter((file) => file.endsWith('.lua'));
  return namesBySha(files.map((file) => [file.slice(0, -4), readFileSync(join(dir, file), 'utf8')] as const));
}

export const beequeue: QueueSystem = {
  id: 'beequeue',
  label: 'Bee-Queue',
  settings: [
    'both sides: removeOnSuccess: true, removeOnFailure: true, storeJobs: false, activateDelayedJobs: false',
    'producer: isWorker: false, sendEvents: false, getEvents: false (true in the latency figure); createJob().save() per job, saveAll() per batch',
    'worker: one Queue per queue with process(concurrency, async () => { }), getEvents: false, sendEvents: false (true in the latency figure); other options at their defaults (stallInterval 5 s, no periodic checkStalledJobs)',
    'producer-side completion (latency figure only): the queue-level "job succeeded" pub/sub event matched to job ids',
  ],
  scriptNames: beeScriptNames,
  openProducer: (url, options) => BeeQueueProducer.open(url, options),
  startWorker: startWorkers,
};
