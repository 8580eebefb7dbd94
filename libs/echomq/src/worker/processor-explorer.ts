import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleInit,
  type Type,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { ProcessorDefinitionError } from '../errors';
import { completeJobs } from '../scripts';
import { RedisConnections } from '../connection/redis-connections';
import { QueueService } from '../queue/queue.service';
import { ClaimLoop } from './claim-loop';
import { Completer } from './completer';
import { JobRunner, type Dispatch } from './job-runner';
import type { QueueOptions } from '../queue/queue-options';
import { LeaseKeeper } from './lease-keeper';
import { assertWorkerOptions, defineProcessor, readProcessorMetadata } from './processor-definition';
import { Reaper } from './reaper';
import { WakeWaiter } from './wake-waiter';

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
  private started = false;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly queues: QueueService,
    private readonly connections: RedisConnections,
    private readonly reaper: Reaper,
  ) {}

  /** The claim loop serving a queue in this application, if any. */
  loop(queue: string): ClaimLoop | undefined {
    return this.loops.get(queue);
  }

  async onModuleInit(): Promise<void> {
    try {
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
      const existing = this.loops.get(metadata.queue);
      if (existing) {
        throw new ProcessorDefinitionError(
          `Two processors serve queue '${metadata.queue}' in one application (${metatype.name} and another); keep one`,
        );
      }
      const definition = defineProcessor(instance, metadata, this.reflector, this.scanner);
      this.loops.set(
        metadata.queue,
        this.createLoop(definition.queue, metadata.options, definition.dispatch),
      );
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.loops.size === 0) return;
    for (const queue of this.loops.keys()) await this.queues.register(queue);
    for (const [queue, loop] of this.loops) {
      loop.start();
      this.logger.log(`Processing queue ${queue} (concurrency ${loop.options.concurrency})`);
    }
    this.reaper.start([...this.loops.keys()]);
    this.started = true;
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.reaper.stop();
    const grace = this.queues.settings.shutdownGraceMs;
    await Promise.all([...this.loops.values()].map((loop) => loop.stop(grace)));
  }

  private createLoop(queue: string, overrides: QueueOptions, dispatch: Dispatch): ClaimLoop {
    this.queues.useProcessorOptions(queue, overrides);
    const options = assertWorkerOptions(queue, this.queues.queueOptions(queue));
    const ctx = this.queues.context(queue);
    const logger = new Logger(`EchoMQ:${queue}`);
    const { commandTimeoutMs, replayWindowMs } = this.queues.settings;
    // A repeat may wait out a full command deadline before Redis runs it: stop repeating
    // one deadline before the replay window ends, so every repeat still finds the first
    // call's recorded outcome (the module keeps the window at least two deadlines long).
    const timing = { commandTimeoutMs, repeatForMs: replayWindowMs - commandTimeoutMs };
    const keeper = new LeaseKeeper(ctx, options.leaseMs, logger);
    const completer = new Completer(
      (completions, requestId) => completeJobs(ctx, completions, options.retainCompletedMs, requestId),
      {
        repeatForMs: timing.repeatForMs,
        onRepeat: (error) => logger.warn(`Completions of ${queue}: ${error.message}; repeating the batch`),
      },
    );
    const runner = new JobRunner(queue, options, ctx, keeper, completer, dispatch, logger, timing);
    const waiter = new WakeWaiter(this.connections, ctx.keys.wake);
    return new ClaimLoop(queue, options, ctx, runner, keeper, waiter, logger, timing);
  }
}
