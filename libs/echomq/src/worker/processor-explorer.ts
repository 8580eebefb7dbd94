import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleInit,
  type Type,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { InvalidArgumentError, ProcessorDefinitionError } from '../errors';
import type { EchoMqModuleOptions } from '../module/echomq-options';
import { ECHOMQ_OPTIONS } from '../module/module-definition';
import { RedisConnections } from '../connection/redis-connections';
import { QueueService } from '../queue/queue.service';
import { CancelWatch } from './cancel-watch';
import { defineProcessor, readProcessorMetadata } from './processor-definition';
import { Reaper } from './reaper';
import { IsolationGate } from './isolation-gate';
import { createProcessorLoops } from './loop-factory';
import { reportLoop, type ClaimLoopReport, type LoopEnded } from './loop-report';
import { LoopEndings, type LoopEndedListener } from './loop-endings';
import { ServedQueues } from './served-queues';
import type { PartitionLoops } from './partition-loops';
import { LayoutFollower } from './layout-follower';
import type { QueueLoop } from './queue-loop';
import { RuntimeHooksRegistry } from '../observability/runtime-hooks-registry';
import { bindWorkerEventHandlers } from '../events/worker-event-handlers';
import { DeclaredSchedules } from '../schedules/declared-schedules';
import { addProcessorSchedules } from './processor-schedules';
import { refuseSecondRoot } from './second-root';

/**
 * Finds @Processor providers the way @nestjs/schedule finds its handlers: discover
 * at module init (bad definitions fail the boot), start claim loops and the reaper
 * at application bootstrap, drain them before shutdown. An application that
 * provides no processors runs no loops and no reaper. Each processor's queue is served by
 * one claim loop per physical queue (PartitionLoops: the queue itself, or its partitions);
 * every public method here takes the queue's own name.
 */
@Injectable()
export class ProcessorExplorer implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('EchoMQ');
  /** Each served queue's loops, by the queue's own name. */
  private readonly groups = new Map<string, PartitionLoops>();
  /** One per application: its loops run a job that may have crashed its last worker alone. */
  private readonly isolation = new IsolationGate();
  private started = false;
  /** The module's and the processors' @Schedule declarations, upserted at bootstrap. */
  private readonly schedules: DeclaredSchedules;
  /** Aborts handlers of jobs removed while they run here: one for every loop (see CancelWatch). */
  private cancels?: CancelWatch;
  /** The served queues' registration: registering in the background, or refused (see ServedQueues). */
  private readonly served: ServedQueues;
  private readonly endings = new LoopEndings(this.logger);
  /** Keeps the groups in step with their partition layouts (see LayoutFollower). */
  private readonly layouts: LayoutFollower;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly queues: QueueService,
    private readonly connections: RedisConnections,
    private readonly reaper: Reaper,
    @Inject(ECHOMQ_OPTIONS) private readonly options: EchoMqModuleOptions,
    private readonly observers: RuntimeHooksRegistry,
  ) {
    this.schedules = new DeclaredSchedules(options.schedules);
    this.served = new ServedQueues(queues, connections, this.logger);
    this.layouts = new LayoutFollower(queues, this.logger, (_group, physical) => {
      if (this.reaper.running) this.reaper.serve([physical]);
    });
  }

  /**
   * What serves a queue in this application, if anything: its claim loop, or for a partitioned
   * queue the group of its loops (one per partition), which answers for the queue as a whole.
   */
  loop(queue: string): QueueLoop | undefined {
    return this.groups.get(queue)?.view;
  }

  /** Whether this application's processor for `queue` is claiming jobs now (from any of its partitions). */
  isServing(queue: string): boolean {
    return this.groups.get(queue)?.claiming ?? false;
  }

  /**
   * Every claim loop here, one per physical queue (`queue` names it: `q`, or `q#2` for a
   * partition), with what it does and whether it should claim (health).
   */
  loopReports(): ClaimLoopReport[] {
    return [...this.groups.values()].flatMap((group) =>
      group.entries().map(([physical, loop]) => reportLoop(physical, loop, this.served.serving(physical))),
    );
  }

  /**
   * Calls `listener` for each claim loop here that an error ends (a defect: it is logged, and
   * health reports it, but the loop claims nothing more), and at once for each that has already
   * ended; `queue` names the loop's physical queue. The worker host exits on it so that its
   * supervisor restarts it. Returns the removal.
   */
  onLoopEnded(listener: LoopEndedListener): () => void {
    const ended: LoopEnded[] = [];
    for (const { queue, state, reason } of this.loopReports()) {
      if (state === 'ended') ended.push({ queue, reason: reason ?? 'unknown' });
    }
    return this.endings.subscribe(listener, ended);
  }

  /**
   * Starts claiming from `queue` in this application (every partition of a partitioned one):
   * for an application booted with `startProcessors: false` (the testing kit's runUntilIdle),
   * or after stopQueue(). The reaper is not started. Throws InvalidArgumentError when no
   * @Processor here serves it.
   */
  startQueue(queue: string): QueueLoop {
    const group = this.requireGroup(queue);
    group.start();
    for (const physical of group.physical) this.served.forget(physical);
    // Shutdown stops the loops only of an application that started some.
    this.started = true;
    return group.view;
  }

  /** Stops claiming from `queue`, every partition (in-flight jobs get graceMs, then are released); startQueue() resumes. */
  async stopQueue(queue: string, graceMs = this.queues.settings.shutdownGraceMs): Promise<void> {
    await this.requireGroup(queue).stopClaiming(graceMs);
  }

  /** What serves `queue` here (see loop); throws InvalidArgumentError, naming the served queues, when nothing does. */
  requireLoop(queue: string): QueueLoop {
    return this.requireGroup(queue).view;
  }

  /**
   * @internal For the testing kit; no stability promise.
   * Gives `queue` a loop for each physical queue its layout gained since it was last looked at
   * (started when the queue is claimed from here), as the background look does every few seconds.
   */
  async followLayout(queue: string): Promise<void> {
    await this.layouts.cover(this.requireGroup(queue));
  }

  private requireGroup(queue: string): PartitionLoops {
    const group = this.groups.get(queue);
    if (!group) {
      const served = [...this.groups.keys()].map((name) => `'${name}'`).join(', ') || 'none';
      throw new InvalidArgumentError(
        `No @Processor serves queue '${queue}' in this application (served here: ${served})`,
      );
    }
    return group;
  }

  async onModuleInit(): Promise<void> {
    try {
      await refuseSecondRoot(this.discovery, ProcessorExplorer);
      this.discover();
    } catch (error) {
      // Nest runs no shutdown hooks for an application whose init failed, so close the
      // connections here, or a process that handles the error would keep them open.
      await this.connections.onApplicationShutdown();
      throw error;
    }
  }

  private discover(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      const metatype = wrapper.metatype;
      if (!instance || !metatype || typeof instance !== 'object') continue;
      const metadata = readProcessorMetadata(this.reflector, metatype as Type);
      if (!metadata) continue;
      if (!wrapper.isDependencyTreeStatic()) {
        throw new ProcessorDefinitionError(
          `${metatype.name} is request-scoped; a @Processor must be a singleton`,
        );
      }
      if (this.groups.has(metadata.queue)) {
        throw new ProcessorDefinitionError(
          `Two processors serve queue '${metadata.queue}' in one application (${metatype.name} and another); keep one`,
        );
      }
      if (metadata.definition) this.queues.useDefinition(metadata.definition);
      const definition = defineProcessor(instance, metadata, this.reflector, this.scanner);
      const where = { reflector: this.reflector, scanner: this.scanner };
      addProcessorSchedules(this.schedules, where, metatype as Type, instance, metadata.queue);
      this.cancels ??= new CancelWatch(this.connections);
      const { queues, connections, isolation, cancels, observers: observer } = this;
      const deps = { queues, connections, isolation, cancels, observer };
      const group = createProcessorLoops(deps, definition.queue, metadata.options, definition.dispatch);
      group.onLoopEnded((physical, reason) => this.endings.tell({ queue: physical, reason }));
      bindWorkerEventHandlers(
        instance,
        group.events,
        this.reflector,
        this.scanner,
        definition.queue,
        (settling) => group.trackHandlerWork(settling),
      );
      this.groups.set(metadata.queue, group);
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    // Before anything is registered or started: the loops of the layout Redis records.
    for (const group of this.groups.values()) await this.layouts.settle(group);
    const physical = [...this.groups.values()].flatMap((group) => group.physical);
    const unregistered = await this.served.registerAll(physical);
    try {
      // Before any claim loop starts, and in producer-only applications too.
      await this.schedules.upsertAll(this.queues, this.logger, this.served.signal);
    } catch (error) {
      await this.connections.onApplicationShutdown();
      throw error;
    }
    if (this.groups.size === 0) return;
    // startProcessors: false (tests): discovered, checked and registered, but nothing claims until startQueue().
    if (this.options.startProcessors === false) return;
    const registered = physical.filter((queue) => !unregistered.includes(queue));
    await DeclaredSchedules.sweepBeforeClaiming(this.queues, registered, this.logger);
    for (const group of this.groups.values()) {
      for (const queue of group.physical) {
        if (!unregistered.includes(queue)) group.startOne(queue);
        else this.served.startOnceRegistered(queue, () => group.startOne(queue));
      }
      this.logger.log(`Processing ${group.describe()}`);
    }
    this.reaper.start(physical);
    this.layouts.start(() => this.groups.values());
    this.started = true;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.served.close();
    await this.layouts.stop();
    if (!this.started) return;
    this.started = false;
    this.reaper.stop();
    const grace = this.queues.settings.shutdownGraceMs;
    await Promise.all([...this.groups.values()].map((group) => group.stop(grace)));
    this.cancels?.close();
  }
}
