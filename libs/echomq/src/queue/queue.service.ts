import { Inject, Injectable } from '@nestjs/common';
import { InvalidArgumentError } from '../errors';
import type { JobId } from '../ids';
import { assertJobId, QUEUE_REGISTRY_KEY, queueKeys, type StateSet } from '../keyspace';
import { ECHOMQ_OPTIONS } from '../module/module-definition';
import { RedisConnections } from '../connection/redis-connections';
import type { EchoMqModuleOptions, ResolvedModuleSettings } from '../module/echomq-options';
import { resolveModuleSettings } from '../module/echomq-options';
import { JOB_ID_MINTER, type JobIdMinter } from '../module/tokens';
import {
  readJobView,
  readJobViews,
  removeJob,
  retryDead,
  type RemovedFrom,
  type ScriptContext,
} from '../scripts';
import { buildJobRecord, type EnqueueOptions, type JobToEnqueue } from './enqueue-options';
import { toJobView, type JobView } from './job-view';
import { QueueEventReader, type QueueEventListener } from './queue-events';
import { waitForJob } from './wait-for';
import { EnqueueBatcher } from './enqueue-batcher';
import { resolveQueueOptions, type QueueOptions, type ResolvedQueueOptions } from './queue-options';
import { browseIds, countStates, readMetrics, type BrowseOptions, type QueueCounts } from './reads';

/** Most jobs one enqueueMany call takes; larger batches are split by the caller. */
export const ENQUEUE_MANY_MAX = 10_000;

/**
 * The application's handle on its queues: enqueue, read and administer jobs.
 * Inject it anywhere once EchoMqModule is imported; it runs no workers itself.
 */
@Injectable()
export class QueueService {
  readonly settings: ResolvedModuleSettings;
  private readonly contexts = new Map<string, ScriptContext>();
  private readonly registered = new Set<string>();
  /** Options of the @Processor serving a queue in this application; they win over configuration. */
  private readonly processorOptions = new Map<string, QueueOptions>();
  private readonly readers = new Map<string, Promise<QueueEventReader>>();
  private readonly batchers = new Map<string, EnqueueBatcher>();

  constructor(
    @Inject(ECHOMQ_OPTIONS) private readonly options: EchoMqModuleOptions,
    private readonly connections: RedisConnections,
    @Inject(JOB_ID_MINTER) private readonly mintId: JobIdMinter,
  ) {
    this.settings = resolveModuleSettings(options);
    connections.beforeClose(async () => {
      for (const reader of this.readers.values()) (await reader.catch(() => undefined))?.stop();
    });
  }

  /** The settings a queue runs with, from configuration; `overrides` (e.g. a decorator's) win. */
  queueOptions(queue: string, overrides?: QueueOptions): ResolvedQueueOptions {
    return resolveQueueOptions(
      this.options.defaults,
      this.options.queues?.[queue],
      this.processorOptions.get(queue),
      overrides,
    );
  }

  /**
   * Records the options of the @Processor serving `queue` in this application, so jobs
   * enqueued from here get its maxAttempts. (Producers in other processes take theirs
   * from their own configuration or the enqueue call: the budget is fixed at enqueue.)
   */
  useProcessorOptions(queue: string, options: QueueOptions): void {
    this.processorOptions.set(queue, options);
  }

  /** Script context of one queue (validates the name). Used by the worker runtime. */
  context(queue: string): ScriptContext {
    let ctx = this.contexts.get(queue);
    if (!ctx) {
      ctx = {
        redis: this.connections.client,
        keys: queueKeys(queue),
        eventsMaxLen: this.settings.eventsMaxLen,
      };
      this.contexts.set(queue, ctx);
    }
    return ctx;
  }

  /** Adds the queue to the registry that reapers and tools read (once per process). */
  async register(queue: string): Promise<void> {
    if (this.registered.has(queue)) return;
    await this.reregister([queue]);
    this.registered.add(queue);
  }

  /** Writes queue names to the registry again, whatever this process remembers (one command). */
  async reregister(queues: readonly string[]): Promise<void> {
    if (queues.length === 0) return;
    for (const queue of queues) queueKeys(queue);
    await this.connections.client.sadd(QUEUE_REGISTRY_KEY, ...queues);
  }

  async enqueue<T>(queue: string, data: T, options: EnqueueOptions = {}): Promise<JobId> {
    const [id] = await this.enqueueMany(queue, [{ ...options, data }]);
    return id;
  }

  /** Enqueues every job in one round trip, all or nothing. Ids come back in input order. */
  async enqueueMany<T>(queue: string, jobs: readonly JobToEnqueue<T>[]): Promise<JobId[]> {
    const ctx = this.context(queue);
    if (!(jobs instanceof Array) || jobs.length > ENQUEUE_MANY_MAX) {
      throw new InvalidArgumentError(`enqueueMany takes an array of at most ${ENQUEUE_MANY_MAX} jobs`);
    }
    if (jobs.length === 0) return [];
    const { maxAttempts } = this.queueOptions(queue);
    const records = jobs.map((job) =>
      buildJobRecord(this.mintId(), job, maxAttempts, this.settings.maxPayloadBytes),
    );
    if (!this.registered.has(queue)) await this.register(queue);
    const outcomes = await this.batcher(queue, ctx).submit(records);
    return outcomes.map((outcome) => outcome.id as JobId);
  }

  /** The job and its state, or undefined when no such job exists (or it finished and was not retained). */
  async getJob<T = unknown>(queue: string, id: string): Promise<JobView<T> | undefined> {
    const ctx = this.context(queue);
    const jobId = assertJobId(id);
    return toJobView<T>(queue, jobId, await readJobView(ctx, jobId));
  }

  /** Ids in one state: pending and dead newest first, active and schedule soonest first. */
  async browse(queue: string, state: StateSet, options?: BrowseOptions): Promise<JobId[]> {
    const ctx = this.context(queue);
    return browseIds(ctx.redis, ctx.keys, state, options);
  }

  /** Like browse, with each job's view; read in one pipelined round trip. Jobs that finished meanwhile are left out. */
  async listJobs<T = unknown>(
    queue: string,
    state: StateSet,
    options?: BrowseOptions,
  ): Promise<JobView<T>[]> {
    const ids = await this.browse(queue, state, options);
    if (ids.length === 0) return [];
    const ctx = this.context(queue);
    const raws = await readJobViews(ctx, ids);
    const views: JobView<T>[] = [];
    raws.forEach((raw, index) => {
      const view = toJobView<T>(queue, ids[index], raw);
      if (view) views.push(view);
    });
    return views;
  }

  async counts(queue: string): Promise<QueueCounts> {
    const ctx = this.context(queue);
    return countStates(ctx.redis, ctx.keys);
  }

  async metrics(queue: string): Promise<Record<string, number>> {
    const ctx = this.context(queue);
    return readMetrics(ctx.redis, ctx.keys);
  }

  /** Names of every queue that was ever enqueued to or served. */
  async listQueues(): Promise<string[]> {
    return (await this.connections.client.smembers(QUEUE_REGISTRY_KEY)).sort();
  }

  /** dead -> pending with a fresh retry budget. Throws JobNotFoundError / JobStateError. */
  async retry(queue: string, id: string): Promise<void> {
    const ctx = this.context(queue);
    await retryDead(ctx, assertJobId(id));
  }

  /** Removes a job in any state; an active job's handler is aborted at its next heartbeat. */
  async remove(queue: string, id: string): Promise<RemovedFrom> {
    const ctx = this.context(queue);
    return removeJob(ctx, assertJobId(id));
  }

  /**
   * Waits for a job to finish: resolves with its result (when it completes) or rejects
   * with JobFailedError (dead), JobNotFoundError (removed or unknown) or WaitTimeoutError.
   * Uses a dedicated connection for the blocking read while it waits.
   */
  async waitFor<R = unknown>(queue: string, id: string, timeoutMs = 30_000): Promise<R> {
    const jobId = assertJobId(id);
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0) {
      throw new InvalidArgumentError('timeoutMs must be a non-negative integer');
    }
    const reader = await this.eventReader(queue);
    return (await waitForJob(reader, jobId, timeoutMs, () => this.getJob(queue, jobId))) as R;
  }

  /**
   * Calls listener with every event of the queue from now on (completed, failed, dead,
   * ...). Returns the function that unsubscribes. All subscriptions and waits of one
   * queue share one connection.
   */
  async subscribe(queue: string, listener: QueueEventListener): Promise<() => void> {
    return (await this.eventReader(queue)).subscribe(listener);
  }

  private batcher(queue: string, ctx: ScriptContext): EnqueueBatcher {
    let batcher = this.batchers.get(queue);
    if (!batcher) {
      batcher = new EnqueueBatcher(ctx, this.settings.idempotencyTtlMs);
      this.batchers.set(queue, batcher);
    }
    return batcher;
  }

  private eventReader(queue: string): Promise<QueueEventReader> {
    let reader = this.readers.get(queue);
    if (!reader) {
      reader = QueueEventReader.start(this.connections, this.context(queue).keys);
      this.readers.set(queue, reader);
      reader.catch(() => this.readers.delete(queue));
    }
    return reader;
  }

  /** Workers stop claiming from a paused queue; enqueue keeps working. */
  async pause(queue: string): Promise<void> {
    const ctx = this.context(queue);
    await ctx.redis.set(ctx.keys.paused, '1');
  }

  async resume(queue: string): Promise<void> {
    const ctx = this.context(queue);
    await ctx.redis.multi().del(ctx.keys.paused).rpush(ctx.keys.wake, '1').exec();
  }

  async isPaused(queue: string): Promise<boolean> {
    const ctx = this.context(queue);
    return (await ctx.redis.exists(ctx.keys.paused)) === 1;
  }
}
