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
import { InvalidArgumentError, ModuleImportedTwiceError, ProcessorDefinitionError } from '../errors';
import type { EchoMqModuleOptions } from '../module/echomq-options';
import { ECHOMQ_OPTIONS } from '../module/module-definition';
import { RedisConnections } from '../connection/redis-connections';
import { QueueService } from '../queue/queue.service';
import { CancelWatch } from './cancel-watch';
import type { ClaimLoop } from './claim-loop';
import { defineProcessor, readProcessorMetadata } from './processor-definition';
import { Reaper } from './reaper';
import { IsolationGate } from './isolation-gate';
import { createClaimLoop } from './loop-factory';
import { reportLoop, type ClaimLoopReport, type LoopEnded } from './loop-report';
import { LoopEndings, type LoopEndedListener } from './loop-endings';
import { ServedQueues } from './served-queues';
import { RuntimeHooksRegistry } from '../observability/runtime-hooks-registry';
import { bindWorkerEventHandlers } from '../events/worker-event-handlers';
import { DeclaredSchedules } from '../schedules/declared-schedules';
import { addProcessorSchedules } from './processor-schedules';

/**
 * Finds @Processor providers the way @nestjs/schedule finds its handlers: discover
 * at module init (bad definitions fail the boot), start claim loops and the reaper
 * at application bootstrap, drain them before shutdown. An application that
 * provides no processors runs no loops and no reaper.
 */
@Injectable()
export class ProcessorExplorer implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('EchoMQ');
  private readonly loops = new Map<string, ClaimLoop>();
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
  }

  /** The claim loop serving a queue in this application, if any. */
  loop(queue: string): ClaimLoop | undefined {
    return this.loops.get(queue);
  }

  /** Whether this application's processor for `queue` is claiming jobs now. */
  isServing(queue: string): boolean {
    return this.loops.get(queue)?.claiming ?? false;
  }

  /** Every processor's claim loop here, by queue name, with what it does and whether it should claim (health). */
  loopReports(): ClaimLoopReport[] {
    return [...this.loops].map(([queue, loop]) => reportLoop(queue, loop, this.served.serving(queue)));
  }

  /**
   * Calls `listener` for each claim loop here that an error ends (a defect: it is logged, and
   * health reports it, but the loop claims nothing more), and at once for each that has already
   * ended. The worker host exits on it so that its supervisor restarts it. Returns the removal.
   */
  onLoopEnded(listener: LoopEndedListener): () => void {
    const ended: LoopEnded[] = [];
    for (const { queue, state, reason } of this.loopReports()) {
      if (state === 'ended') ended.push({ queue, reason: reason ?? 'unknown' });
    }
    return this.endings.subscribe(listener, ended);
  }

  /**
   * Starts claiming from `queue` in this application: for an application booted with
   * `startProcessors: false` (the testing kit's runUntilIdle), or after stopQueue(). The
   * reaper is not started. Throws InvalidArgumentError when no @Processor here serves it.
   */
  startQueue(queue: string): ClaimLoop {
    const loop = this.requireLoop(queue);
    loop.start();
    this.served.forget(queue);
    // Shutdown stops the loops only of an application that started some.
    this.started = true;
    return loop;
  }

  /** Stops claiming from `queue` (in-flight jobs get graceMs, then are released); startQueue() resumes. */
  async stopQueue(queue: string, graceMs = this.queues.settings.shutdownGraceMs): Promise<void> {
    await this.requireLoop(queue).stopClaiming(graceMs);
  }

  /** The claim loop serving `queue` here; throws InvalidArgumentError, naming the served queues, when none does. */
  requireLoop(queue: string): ClaimLoop {
    const loop = this.loops.get(queue);
    if (!loop) {
      const served = [...this.loops.keys()].map((name) => `'${name}'`).join(', ') || 'none';
      throw new InvalidArgumentError(
        `No @Processor serves queue '${queue}' in this application (served here: ${served})`,
      );
    }
    return loop;
  }

  async onModuleInit(): Promise<void> {
    try {
      await this.refuseSecondRoot();
      this.discover();
    } catch (error) {
      // Nest runs no shutdown hooks for an application whose init failed, so close the
      // connections here, or a process that handles the error would keep them open.
      await this.connections.onApplicationShutdown();
      throw error;
    }
  }

  /**
   * Each forRoot import brings its own explorer, and each would serve every processor of
   * the application (twice the concurrency, twice the connections), so one application
   * holds one root: a second is refused at boot, naming the fix.
   */
  private async refuseSecondRoot(): Promise<void> {
    const providers = this.discovery.getProviders();
    const roots = providers.filter((wrapper) => wrapper.metatype === ProcessorExplorer).length;
    if (roots <= 1) return;
    // Init stops at the first refusal and Nest runs no shutdown hooks: close every root's
    // connections (and node lease), not only this one's, or a process that handles the
    // error keeps the others' sockets and timers alive.
    const connections = providers
      .map((wrapper) => wrapper.instance as unknown)
      .filter((instance): instance is RedisConnections => instance instanceof RedisConnections);
    await Promise.all(connections.map((each) => each.onApplicationShutdown()));
    throw new ModuleImportedTwiceError(roots);
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
      const existing = this.loops.get(metadata.queue);
      if (existing) {
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
      const loop = createClaimLoop(
        { queues, connections, isolation, cancels, observer },
        definition.queue,
        metadata.options,
        definition.dispatch,
      );
      bindWorkerEventHandlers(
        instance,
        loop.events,
        this.reflector,
        this.scanner,
        definition.queue,
        (settling) => loop.trackHandlerWork(settling),
      );
      loop.onEnded((reason) => this.endings.tell({ queue: definition.queue, reason }));
      this.loops.set(metadata.queue, loop);
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    const unregistered = await this.served.registerAll(this.loops.keys());
    try {
      // Before any claim loop starts, and in producer-only applications too.
      await this.schedules.upsertAll(this.queues, this.logger, this.served.signal);
    } catch (error) {
      await this.connections.onApplicationShutdown();
      throw error;
    }
    if (this.loops.size === 0) return;
    // startProcessors: false (tests): discovered, checked and registered, but nothing claims until startQueue().
    if (this.options.startProcessors === false) return;
    const registered = [...this.loops.keys()].filter((queue) => !unregistered.includes(queue));
    await DeclaredSchedules.sweepBeforeClaiming(this.queues, registered, this.logger);
    for (const queue of registered) this.startLoop(queue, this.loops.get(queue)!);
    for (const queue of unregistered) {
      this.served.startOnceRegistered(queue, () => this.startLoop(queue, this.loops.get(queue)!));
    }
    this.reaper.start([...this.loops.keys()]);
    this.started = true;
  }

  private startLoop(queue: string, loop: ClaimLoop): void {
    loop.start();
    this.logger.log(`Processing queue ${queue} (concurrency ${loop.options.concurrency})`);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.served.close();
    if (!this.started) return;
    this.started = false;
    this.reaper.stop();
    const grace = this.queues.settings.shutdownGraceMs;
    await Promise.all([...this.loops.values()].map((loop) => loop.stop(grace)));
    this.cancels?.close();
  }
}
