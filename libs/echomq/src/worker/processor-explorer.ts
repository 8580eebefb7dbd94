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
import {
  InvalidArgumentError,
  isTransientRedisError,
  ModuleImportedTwiceError,
  ProcessorDefinitionError,
} from '../errors';
import type { EchoMqModuleOptions } from '../module/echomq-options';
import { ECHOMQ_OPTIONS } from '../module/module-definition';
import { onceReachable } from '../connection/once-reachable';
import { RedisConnections } from '../connection/redis-connections';
import { QueueService } from '../queue/queue.service';
import { CancelWatch } from './cancel-watch';
import type { ClaimLoop } from './claim-loop';
import { defineProcessor, readProcessorMetadata } from './processor-definition';
import { Reaper } from './reaper';
import { IsolationGate } from './isolation-gate';
import { createClaimLoop } from './loop-factory';
import { reportLoop, type ClaimLoopReport } from './loop-report';
import { RuntimeHooksRegistry } from '../observability/runtime-hooks-registry';
import { bindWorkerEventHandlers } from '../events/worker-event-handlers';
import { DeclaredSchedules } from '../schedules/declared-schedules';
import { readScheduleMetadata } from '../schedules/schedule.decorator';
import { HANDLE_METADATA } from './processor.decorator';

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
  /** Ends the background registration of queues Redis was down for at boot. */
  private readonly bootstrapAbort = new AbortController();
  /** The module's and the processors' @Schedule declarations, upserted at bootstrap. */
  private readonly schedules: DeclaredSchedules;
  /** Aborts handlers of jobs removed while they run here: one for every loop (see CancelWatch). */
  private cancels?: CancelWatch;
  /** Served queues whose loop starts once Redis lets them register (it was unreachable at boot). */
  private readonly registering = new Set<string>();
  /** Served queues Redis said this worker must not serve, and why (see startOnceRegistered). */
  private readonly refused = new Map<string, string>();

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
    return [...this.loops].map(([queue, loop]) =>
      reportLoop(queue, loop, { refused: this.refused.get(queue), registering: this.registering.has(queue) }),
    );
  }

  /**
   * Starts claiming from `queue` in this application: for an application booted with
   * `startProcessors: false` (the testing kit's runUntilIdle), or after stopQueue(). The
   * reaper is not started. Throws InvalidArgumentError when no @Processor here serves it.
   */
  startQueue(queue: string): ClaimLoop {
    const loop = this.requireLoop(queue);
    loop.start();
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
      this.discoverSchedules(metatype as Type, instance, metadata.queue);
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
      this.loops.set(metadata.queue, loop);
    }
  }

  /**
   * The @Schedule declarations of a processor: on the class (occurrences named by the
   * declaration, else handled by process()), and on its methods (named by the method's @Handle).
   */
  private discoverSchedules(metatype: Type, instance: object, queue: string): void {
    const className = metatype.name;
    this.schedules.addDeclarations(queue, readScheduleMetadata(metatype), `@Schedule on ${className}`);
    const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
    for (const method of this.scanner.getAllMethodNames(prototype)) {
      const fn = prototype[method];
      if (typeof fn !== 'function') continue;
      const declared = readScheduleMetadata(fn);
      if (declared.length === 0) continue;
      const handles = this.reflector.get<string | undefined>(HANDLE_METADATA, fn as () => unknown);
      if (
        handles === undefined &&
        method !== 'process' &&
        declared.some((entry) => entry.declaration.name === undefined)
      ) {
        throw new ProcessorDefinitionError(
          `@Schedule on ${className}.${method}: the method is neither process() nor a @Handle(name), so no job would reach it`,
        );
      }
      this.schedules.addDeclarations(queue, declared, `@Schedule on ${className}.${method}`, handles ?? '');
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    const unregistered = await this.registerServed();
    try {
      // Before any claim loop starts, and in producer-only applications too.
      await this.schedules.upsertAll(this.queues, this.logger, this.bootstrapAbort.signal);
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
    for (const queue of unregistered) this.registering.add(queue);
    for (const queue of unregistered) void this.startOnceRegistered(queue);
    this.reaper.start([...this.loops.keys()]);
    this.started = true;
  }

  /** Registers the served queues; returns those Redis was unreachable for (registered in the background). */
  private async registerServed(): Promise<string[]> {
    const unregistered: string[] = [];
    try {
      for (const queue of this.loops.keys()) {
        try {
          await this.queues.register(queue);
        } catch (error) {
          // Redis down at boot: the application still boots, and the queue is registered
          // (its data format checked) in the background before its loop starts.
          if (!isTransientRedisError(error)) throw error;
          unregistered.push(queue);
        }
      }
    } catch (error) {
      // A queue this worker must not serve (DataFormatError, RedisVersionError,
      // EvictionPolicyError) stops the boot before any loop starts; Nest runs no shutdown
      // hooks then, so close the connections here.
      await this.connections.onApplicationShutdown();
      throw error;
    }
    return unregistered;
  }

  private startLoop(queue: string, loop: ClaimLoop): void {
    loop.start();
    this.logger.log(`Processing queue ${queue} (concurrency ${loop.options.concurrency})`);
  }

  /**
   * Registers a queue whose registration failed at boot because Redis was unreachable,
   * repeating until Redis answers, then starts its loop. A queue Redis says this worker
   * must not serve (a newer data format) is left unserved, said once as an error.
   */
  private async startOnceRegistered(queue: string): Promise<void> {
    try {
      const registered = await onceReachable(() => this.queues.register(queue), this.bootstrapAbort.signal);
      this.registering.delete(queue);
      if (registered) this.startLoop(queue, this.loops.get(queue)!);
    } catch (error) {
      this.registering.delete(queue);
      this.refused.set(queue, (error as Error).message);
      this.logger.error(`Not serving queue ${queue}: ${(error as Error).message}`);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.bootstrapAbort.abort();
    this.registering.clear();
    this.refused.clear();
    if (!this.started) return;
    this.started = false;
    this.reaper.stop();
    const grace = this.queues.settings.shutdownGraceMs;
    await Promise.all([...this.loops.values()].map((loop) => loop.stop(grace)));
    this.cancels?.close();
  }
}
