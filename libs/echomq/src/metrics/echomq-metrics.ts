import { Injectable, Logger } from '@nestjs/common';
import { Registry } from 'prom-client';
import { RedisConnections } from '../connection/redis-connections';
import { RuntimeHooksRegistry } from '../observability/runtime-hooks-registry';
import { QueueService } from '../queue/queue.service';
import { registerRedisMetrics } from './redis-metrics';
import { RedisSnapshots } from './redis-snapshot';
import { RuntimeMetrics } from './runtime-metrics';

/**
 * EchoMQ's Prometheus metrics for this application (prom-client), in a registry of its own, so
 * two applications in one process (or a test's) never collide and the application's own
 * default registry is left alone:
 * - read from Redis at each scrape (bounded and shared, see RedisSnapshots), the same from
 *   every process: depths per set and lane, pause flags, transition counters;
 * - this process's worker runtime: claims, handler durations, settlements by outcome (STALE
 *   included), reaped leases.
 * Serve `text()` with `contentType` on a route of yours, or merge `registry` with others
 * (prom-client's `Registry.merge([register, metrics.registry])`). docs/operations.md lists them.
 */
@Injectable()
export class EchoMqMetrics {
  /** Every EchoMQ metric of this application, and nothing else. */
  readonly registry = new Registry();

  constructor(queues: QueueService, connections: RedisConnections, observers: RuntimeHooksRegistry) {
    const snapshots = new RedisSnapshots(queues, connections.reachability, new Logger('EchoMQ:metrics'));
    registerRedisMetrics(this.registry, snapshots);
    observers.register(new RuntimeMetrics(this.registry));
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
