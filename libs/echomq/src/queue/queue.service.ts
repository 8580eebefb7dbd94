import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { JobId } from '../ids';
import { logicalQueueOf, queueKeys, queueRegistryKey } from '../keyspace';
import { ECHOMQ_OPTIONS } from '../module/module-definition';
import { RedisConnections } from '../connection/redis-connections';
import { untilOutage } from '../connection/until-outage';
import { replicaWaitFor, type DurableScriptContext } from '../durability/durable-context';
import type { ReplicaWait } from '../durability/replica-confirmer';
import type { EchoMqModuleOptions, ResolvedModuleSettings } from '../module/echomq-options';
import { resolveModuleSettings } from '../module/echomq-options';
import { JOB_ID_MINTER, type JobIdMinter } from '../module/tokens';
import { Enqueuer } from './enqueuer';
import { QueueEventReaders, READER_IDLE_MS } from '../events/event-readers';
import { resolveQueueOptions, type QueueOptions, type ResolvedQueueOptions } from './queue-options';
import { configuredLimits } from './flow-limits';
import type { FlowLimits } from '../scripts/set-limits';
import { queuesWithConfiguredLimits, registerAtBoot } from './limits-at-boot';
import { ENQUEUE_MANY_MAX } from '../scripts/limits';
import type { QueueDefinition } from './queue-definition';
import { QueueDefinitions } from './queue-definitions';
import { QueueRegistration } from './queue-registration';
import { QueueHandle } from './queue-handle';
import { EnqueueSurface } from './surfaces/enqueue-surface';
import { monotonicMs } from '../monotonic';
import { PartitionDirectory } from './partitions/partition-directory';
import type { PartitionLayout } from './partitions/partition-layout';
import { ConfiguredShares } from './partitions/configured-shares';

export { ENQUEUE_MANY_MAX };

/**
 * The application's handle on its queues: enqueue, read and administer jobs.
 * Inject it anywhere once EchoMqModule is imported; it runs no workers itself.
 */
@Injectable()
export class QueueService extends EnqueueSurface implements OnApplicationBootstrap {
  readonly settings: ResolvedModuleSettings;
  private readonly contexts = new Map<string, DurableScriptContext>();
  /** Confirms enqueues and claims with WAIT when the module option `durable` is set. */
  private readonly durability?: ReplicaWait;
  private readonly registration: QueueRegistration;
  /** Options of the @Processor serving a queue in this application; they win over configuration. */
  private readonly processorOptions = new Map<string, QueueOptions>();
  /** One event reader per queue someone listens to, closed when idle. */
  protected readonly readers: QueueEventReaders;
  protected readonly enqueuer: Enqueuer;
  /** Typed definitions this application declared (forFeature, @Processor, queue()): their data schemas apply at enqueue. */
  protected readonly definitions = new QueueDefinitions();
  /** Each queue's partitions: declared here, or as the registry records them (docs/partitions.md). */
  private readonly partitions: PartitionDirectory;
  private readonly shares = new ConfiguredShares(new Logger('EchoMQ'));

  constructor(
    @Inject(ECHOMQ_OPTIONS) private readonly options: EchoMqModuleOptions,
    private readonly connections: RedisConnections,
    @Inject(JOB_ID_MINTER) minter: JobIdMinter,
  ) {
    super();
    this.settings = resolveModuleSettings(options);
    this.durability = replicaWaitFor(connections, options.durable);
    this.partitions = new PartitionDirectory(
      () => connections.client,
      this.settings.keyPrefix,
      (queue) => this.queueOptions(queue).partitions,
      (work) => untilOutage(connections, () => work()),
    );
    this.registration = new QueueRegistration(connections, this.settings.keyPrefix, (physical) =>
      this.configuredLimitsOf(physical),
    );
    this.readers = new QueueEventReaders(connections, READER_IDLE_MS, this.settings.keyPrefix);
    this.enqueuer = new Enqueuer(this.settings, minter, this.definitions, (queue) =>
      this.registerIfDue(queue),
    );
    connections.beforeClose(() => this.readers.stopAll());
  }

  /**
   * The settings this process serves a queue with: configuration, then the serving
   * @Processor's options; `overrides` win. A job's own enqueue options win over all of them.
   */
  queueOptions(queue: string, overrides?: QueueOptions): ResolvedQueueOptions {
    // A partition is served with its queue's settings.
    const logical = logicalQueueOf(queue);
    return resolveQueueOptions(
      this.options.defaults,
      this.options.queues?.[logical],
      this.processorOptions.get(logical),
      overrides,
    );
  }

  /**
   * Where the queue's jobs live: its partitions when it is partitioned (declared here, or as
   * the partitions registry records it), else the queue itself. Checks the name before
   * anything is sent; a partition's own name (`emails#2`) addresses that partition alone.
   */
  async partitionLayout(queue: string): Promise<PartitionLayout> {
    return this.partitions.layout(queue);
  }

  /** The layout for a write that creates work: a partition named directly must be one its queue has. */
  protected writeLayout(queue: string): Promise<PartitionLayout> {
    return this.partitions.writeLayout(queue);
  }

  /**
   * The shared limits this process configures for one physical queue: its queue's, split over
   * the physical queues of a partitioned queue (see ConfiguredShares; never throws).
   */
  private configuredLimitsOf(physical: string): Partial<FlowLimits> {
    const logical = logicalQueueOf(physical);
    const limits = configuredLimits(
      this.options.defaults,
      this.options.queues?.[logical],
      this.processorOptions.get(logical),
    );
    return this.shares.shareOf(physical, this.partitions.knownLayout(logical), limits);
  }

  /**
   * @internal For the worker runtime; no stability promise.
   * Records the options of the @Processor serving `queue` in this application, so that
   * queueOptions reports what this process serves it with. Nothing of them is written at
   * enqueue: a job without its own maxAttempts or backoff takes those of the worker that
   * claims it, in whichever process (docs/options.md, "Which settings a job runs with").
   */
  useProcessorOptions(queue: string, options: QueueOptions): void {
    this.processorOptions.set(logicalQueueOf(queue), options);
    // Its shared limits are written when the queue is next registered, even if a producer
    // of this process registered it already.
    this.registration.forget(queue);
  }

  /**
   * @internal Script context of one queue (validates the name), for the worker runtime. With
   * durable writes it carries the replica confirmation that enqueues and claims wait for.
   */
  context(queue: string): DurableScriptContext {
    let ctx = this.contexts.get(queue);
    if (!ctx) {
      ctx = {
        redis: this.connections.client,
        keys: queueKeys(queue, this.settings.keyPrefix),
        eventsMaxLen: this.settings.eventsMaxLen,
        replayWindowMs: this.settings.replayWindowMs,
        ...(this.durability ? { durability: this.durability } : {}),
      };
      this.contexts.set(queue, ctx);
    }
    return ctx;
  }

  /**
   * Writes the limits configured under `queues.<name>` at bootstrap, not at each queue's first
   * enqueue, which would undo an admin's setLimits made in between (docs/options.md, "Limits
   * live in Redis"). The queues a @Processor here serves are registered by the explorer.
   */
  async onApplicationBootstrap(): Promise<void> {
    const queues = queuesWithConfiguredLimits(this.options, (queue) => this.processorOptions.has(queue));
    await registerAtBoot(queues, (queue) => this.registerEveryPhysical(queue), new Logger('EchoMQ'));
  }

  /**
   * A partitioned queue's limits live in each of its physical queues, so each one is registered
   * (and given its share) at boot: left to a partition's first enqueue, its write would undo an
   * admin's setLimits made in between.
   */
  private async registerEveryPhysical(queue: string): Promise<void> {
    const { physical } = await this.partitionLayout(queue);
    await Promise.all(physical.map((name) => this.register(name)));
  }

  /**
   * @internal For the worker runtime; no stability promise.
   * Readies a queue for this process (again once a minute while in use): the server is a
   * Redis new enough, the queue's data format is one this code knows (recorded on first use),
   * and the queue is in the registry that reapers and tools read (docs/upgrading.md).
   * @throws RedisVersionError or DataFormatError, having written nothing; a worker's boot stops.
   */
  async register(queue: string): Promise<void> {
    await this.registration.register(this.context(queue));
  }

  /** @internal Writes queue names to the registry again, whatever this process remembers (one command). */
  async reregister(queues: readonly string[]): Promise<void> {
    await this.registration.reregister(queues);
  }

  /**
   * The typed handle of a defined queue (see defineQueue). Also declares the definition to
   * this application, so its data schema is checked at enqueue, by name or by handle.
   */
  queue<Q extends QueueDefinition<unknown, unknown>>(definition: Q): QueueHandle<Q> {
    this.useDefinition(definition);
    return new QueueHandle(definition, this);
  }

  /**
   * @internal For the worker runtime; no stability promise.
   * Declares a typed definition (forFeature and @Processor do). One name may be declared by
   * several modules with the same definition; two definitions with different schemas are refused.
   */
  useDefinition(definition: QueueDefinition<unknown, unknown>): void {
    this.definitions.use(definition);
  }

  /** Names of every queue that was ever enqueued to or served (a partitioned queue once, by its own name). */
  async listQueues(): Promise<string[]> {
    return [...new Set((await this.listPhysicalQueues()).map(logicalQueueOf))].sort();
  }

  /**
   * @internal For the reaper, metrics and tools; no stability promise.
   * Every physical queue in the registry: unpartitioned queues and each partition (`emails#0`).
   */
  async listPhysicalQueues(): Promise<string[]> {
    return (await this.connections.client.smembers(queueRegistryKey(this.settings.keyPrefix))).sort();
  }

  /**
   * An admin call whose reply was lost is repeated under its request id (so a remove that
   * went through reports its state, not 404) for up to one more deadline; an unreachable
   * Redis is reported at once, having already waited a deadline.
   */
  protected repeatOnce(): { untilMs: number; retryUnavailable: boolean } {
    return { untilMs: monotonicMs() + this.settings.commandTimeoutMs * 2, retryUnavailable: false };
  }

  protected mintIds(count: number, tag?: number): Promise<JobId[]> {
    return this.enqueuer.mintIds(count, tag);
  }

  protected async registerIfDue(queue: string): Promise<void> {
    if (this.registration.needed(queue)) await this.register(queue);
  }

  protected forgetRegistration(queue: string): void {
    this.registration.forget(queue);
    this.partitions.forget(logicalQueueOf(queue));
  }

  protected forgetPartitions(queue: string): Promise<void> {
    return this.partitions.remove(queue);
  }

  protected yieldLimits(queue: string): Promise<void> {
    return this.registration.yieldLimits(queue);
  }
}
