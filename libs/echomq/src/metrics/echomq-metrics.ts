import { Injectable, Logger } from '@nestjs/common';
import { Registry } from 'prom-client';
import { RedisConnections } from '../connection/redis-connections';
import { RuntimeHooksRegistry } from '../observability/runtime-hooks-registry';
import { QueueService } from '../queue/queue.service';
import { ProcessorExplorer } from '../worker/processor-explorer';
import { registerHandlerMetrics } from './handler-metrics';
import { registerRedisMetrics } from './redis-metrics';
import { RedisSnapshots } from './redis-snapshot';
import { RuntimeMetrics } from './runtime-metrics';

/**
 * EchoMQ's Prometheus metrics for this application (prom-client), in registries of its own, so
 * two applications in one process (or a test's) never collide and the application's own
 * default registry is left alone:
 * - read from Redis at each scrape (bounded and shared, see RedisSnapshots), the same from
 *   every process: depths per set and lane, pause flags, transition counters;
 * - this process's worker runtime: claims, handler durations and the handlers running now,
 *   settlements by outcome (STALE included), reaped leases (`runtimeRegistry` alone).
 * Serve `text()` with `contentType` on a route of yours, or merge `registry` (or only
 * `runtimeRegistry`) with others (prom-client's `Registry.merge([register, metrics.registry])`).
 * docs/operations.md lists them.
 */
@Injectable()
export class EchoMqMetrics {
  /**
   * This process's own metrics only: its worker runtime, no read of Redis at a scrape. What a
   * worker serves when one other process (the api) reports the queue-wide metrics for all.
   */
  readonly runtimeRegistry = new Registry();
  /** Every EchoMQ metric of this application (read from Redis, then this process's own), and nothing else. */
  readonly registry: Registry;

  constructor(
    queues: QueueService,
    connections: RedisConnections,
    observers: RuntimeHooksRegistry,
    explorer: ProcessorExplorer,
  ) {
    const fromRedis = new Registry();
    const snapshots = new RedisSnapshots(queues, connections.reachability, new Logger('EchoMQ:metrics'));
    registerRedisMetrics(fromRedis, snapshots);
    observers.register(new RuntimeMetrics(this.runtimeRegistry));
    registerHandlerMetrics(this.runtimeRegistry, () => explorer.loopReports());
    this.registry = Registry.merge([fromRedis, this.runtimeRegistry]);
  }

  /** The exposition text a `/metrics` route answers with (Prometheus text format 0.0.4). */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** The Content-Type of `text()`: `text/plain; version=0.0.4; charset=utf-8`. */
  get contentType(): string {
    return this.registry.contentType;
  }
}
