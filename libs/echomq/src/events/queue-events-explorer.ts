import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnModuleInit,
  type Type,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { onceReachable } from '../connection/once-reachable';
import { RedisConnections } from '../connection/redis-connections';
import { isTransientRedisError, ProcessorDefinitionError } from '../errors';
import { QueueService } from '../queue/queue.service';
import { readProcessorMetadata } from '../worker/processor-definition';
import { callIsolated } from './isolate';
import { decoratedMethods } from './method-metadata';
import { ON_WORKER_EVENT_METADATA } from './on-worker-event.decorator';
import { parseQueueEvent } from './parse-queue-event';
import type { QueueEvent } from './queue-event';
import {
  EVERY_QUEUE_EVENT,
  ON_QUEUE_EVENT_METADATA,
  QUEUE_EVENTS_LISTENER_METADATA,
  type QueueEventSelector,
  type QueueEventsListenerMetadata,
} from './queue-events-listener.decorator';

type ProviderWrapper = ReturnType<DiscoveryService['getProviders']>[number];

/** One @OnQueueEvent method of one listener instance. */
interface EventHandler {
  /** Class.method, for the log line when it throws. */
  readonly label: string;
  readonly selectors: ReadonlySet<QueueEventSelector>;
  readonly call: (payload: unknown) => unknown;
}

/** The handlers of one queue, and the types any of them takes (other events are not even parsed). */
interface QueueRoute {
  readonly handlers: EventHandler[];
  readonly wanted: Set<QueueEventSelector>;
}

/**
 * Finds @QueueEventsListener providers the way @nestjs/schedule finds its handlers:
 * discover at module init (a bad definition fails the boot), subscribe at application
 * bootstrap (one subscription per queue, shared by its listeners), unsubscribe when
 * shutdown begins. Runs in every application, producer-only ones included.
 */
@Injectable()
export class QueueEventsExplorer implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('EchoMQ');
  private readonly routes = new Map<string, QueueRoute>();
  private readonly seen = new WeakSet<object>();
  private unsubscribes: (() => void)[] = [];
  /** Ends the background subscriptions of queues Redis was down for at boot. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly queues: QueueService,
    private readonly connections: RedisConnections,
  ) {}

  async onModuleInit(): Promise<void> {
    try {
      for (const wrapper of this.discovery.getProviders()) this.discover(wrapper);
    } catch (error) {
      // Nest runs no shutdown hooks for an application whose init failed: close the
      // connections here, or a process that handles the error would keep them open.
      await this.connections.onApplicationShutdown();
      throw error;
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    try {
      for (const [queue, route] of this.routes) {
        try {
          await this.listen(queue, route);
        } catch (error) {
          // Redis down at boot: the application still boots; this queue is listened to
          // as soon as Redis answers.
          if (!isTransientRedisError(error)) throw error;
          void this.listenOnceReachable(queue, route);
        }
      }
    } catch (error) {
      this.unsubscribeAll();
      // Nest runs no shutdown hooks for an application whose bootstrap failed.
      await this.connections.onApplicationShutdown();
      throw error;
    }
  }

  beforeApplicationShutdown(): void {
    this.stopping.abort();
    this.unsubscribeAll();
  }

  private async listen(queue: string, route: QueueRoute): Promise<void> {
    this.unsubscribes.push(await this.queues.subscribe(queue, (event) => this.route(queue, route, event)));
    this.logger.log(`Listening to events of queue ${queue} (${route.handlers.length} handlers)`);
  }

  private async listenOnceReachable(queue: string, route: QueueRoute): Promise<void> {
    try {
      const listening = await onceReachable(() => this.listen(queue, route), this.stopping.signal);
      // Shut down while subscribing: the subscription just made must not outlive the app.
      if (!listening) this.unsubscribeAll();
    } catch (error) {
      this.logger.error(`Not listening to events of queue ${queue}: ${(error as Error).message}`);
    }
  }

  private unsubscribeAll(): void {
    for (const unsubscribe of this.unsubscribes) unsubscribe();
    this.unsubscribes = [];
  }

  private discover(wrapper: ProviderWrapper): void {
    const instance: unknown = wrapper.instance;
    if (!instance || typeof instance !== 'object' || !wrapper.metatype) return;
    // The class is the instance's own: a useFactory or useExisting provider's metatype is the
    // factory, and an alias is the same instance again, whose handlers are bound once.
    if (this.seen.has(instance)) return;
    this.seen.add(instance);
    const metatype = instance.constructor as Type;
    const listener = this.reflector.get<QueueEventsListenerMetadata | undefined>(
      QUEUE_EVENTS_LISTENER_METADATA,
      metatype,
    );
    const methods = decoratedMethods<QueueEventSelector>(
      instance,
      ON_QUEUE_EVENT_METADATA,
      this.reflector,
      this.scanner,
    );
    this.checkWorkerEventMethods(instance, metatype);
    if (!listener) {
      if (methods.length === 0) return;
      throw new ProcessorDefinitionError(
        `${metatype.name} has @OnQueueEvent methods but is not a @QueueEventsListener(queue): ` +
          'add the class decorator, or its methods are never called',
      );
    }
    if (!wrapper.isDependencyTreeStatic()) {
      throw new ProcessorDefinitionError(
        `${metatype.name} is request-scoped; a @QueueEventsListener must be a singleton`,
      );
    }
    if (methods.length === 0) {
      throw new ProcessorDefinitionError(
        `${metatype.name} is a @QueueEventsListener('${listener.queue}') but has no @OnQueueEvent methods`,
      );
    }
    const route = this.routeOf(listener.queue);
    for (const method of methods) {
      const selectors = new Set(method.values);
      for (const selector of selectors) route.wanted.add(selector);
      route.handlers.push({
        label: `${metatype.name}.${method.name}`,
        selectors,
        call: (payload) => method.fn.call(instance, payload),
      });
    }
  }

  /** @OnWorkerEvent reports a processor's own jobs: on any other class it would never be called. */
  private checkWorkerEventMethods(instance: object, metatype: Type): void {
    if (readProcessorMetadata(this.reflector, metatype)) return;
    const methods = decoratedMethods(instance, ON_WORKER_EVENT_METADATA, this.reflector, this.scanner);
    if (methods.length === 0) return;
    throw new ProcessorDefinitionError(
      `${metatype.name}.${methods[0].name} has @OnWorkerEvent but ${metatype.name} is not a @Processor: ` +
        'worker events report the jobs of the processor they are declared on ' +
        '(use @QueueEventsListener and @OnQueueEvent for the events of a queue)',
    );
  }

  private routeOf(queue: string): QueueRoute {
    let route = this.routes.get(queue);
    if (!route) {
      route = { handlers: [], wanted: new Set() };
      this.routes.set(queue, route);
    }
    return route;
  }

  /** Hands one event to the handlers that take its type, each on its own (the reader isolates only the whole route). */
  private route(queue: string, route: QueueRoute, event: QueueEvent): void {
    const type = event.type as QueueEventSelector;
    if (!route.wanted.has(EVERY_QUEUE_EVENT) && !route.wanted.has(type)) return;
    const payload = parseQueueEvent(queue, event);
    for (const handler of route.handlers) {
      if (!handler.selectors.has(EVERY_QUEUE_EVENT) && !handler.selectors.has(type)) continue;
      const what = `${handler.label} (event ${event.type} ${event.streamId} of ${queue})`;
      void callIsolated(this.logger, what, () => handler.call(payload));
    }
  }
}
