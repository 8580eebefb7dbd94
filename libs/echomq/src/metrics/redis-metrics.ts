import { Counter, Gauge, type Registry } from 'prom-client';
import { STATE_SETS } from '../keyspace';
import type { QueueSnapshot, RedisSnapshot, RedisSnapshots } from './redis-snapshot';

/**
 * Lanes reported per queue, the deepest (pending + active) first: a queue with a lane per
 * tenant must not grow a series per tenant. `echomq_queue_lanes` counts them all.
 */
export const LANES_REPORTED_MAX = 100;

/** The deepest LANES_REPORTED_MAX lanes of a queue, deepest first (then by name, for stable series). */
function reportedLanes(queue: QueueSnapshot): QueueSnapshot['lanes'] {
  if (queue.lanes.length <= LANES_REPORTED_MAX) return queue.lanes;
  return [...queue.lanes]
    .sort((a, b) => b.pending + b.active - (a.pending + a.active) || (a.lane < b.lane ? -1 : 1))
    .slice(0, LANES_REPORTED_MAX);
}

/**
 * The metrics read from Redis at scrape time, the same in every process that reports them (the
 * api, each worker), since they describe the queues, not the process: depths per set and per
 * lane, the pause flag, and the transition counters the scripts keep (docs/operations.md).
 * Each collect resets its metric and sets it from the snapshot in one synchronous step after
 * the shared read, so a queue that is gone drops out and concurrent scrapes never add up.
 */
export function registerRedisMetrics(registry: Registry, snapshots: RedisSnapshots): void {
  const registers = [registry];
  const fill = async <M extends { reset(): void }>(
    metric: M,
    set: (metric: M, snapshot: RedisSnapshot) => void,
  ): Promise<void> => {
    const snapshot = await snapshots.get();
    metric.reset();
    set(metric, snapshot);
  };

  new Gauge({
    name: 'echomq_queue_jobs',
    help: 'Jobs in each set of the queue (pending, active, schedule, dead), read from Redis',
    labelNames: ['queue', 'set'],
    registers,
    collect() {
      return fill(this, (gauge, { queues }) => {
        for (const { queue, counts } of queues) {
          for (const set of STATE_SETS) gauge.set({ queue, set }, counts[set]);
        }
      });
    },
  });

  new Gauge({
    name: 'echomq_lane_jobs',
    help: `Jobs of each lane in pending and in active, read from Redis (the ${LANES_REPORTED_MAX} deepest lanes of a queue)`,
    labelNames: ['queue', 'lane', 'set'],
    registers,
    collect() {
      return fill(this, (gauge, { queues }) => {
        for (const snapshot of queues) {
          for (const { lane, pending, active } of reportedLanes(snapshot)) {
            gauge.set({ queue: snapshot.queue, lane, set: 'pending' }, pending);
            gauge.set({ queue: snapshot.queue, lane, set: 'active' }, active);
          }
        }
      });
    },
  });

  new Gauge({
    name: 'echomq_queue_lanes',
    help: 'Lanes the queue has (with work, held back, paused or configured), reported or not',
    labelNames: ['queue'],
    registers,
    collect() {
      return fill(this, (gauge, { queues }) => {
        for (const { queue, lanes } of queues) gauge.set({ queue }, lanes.length);
      });
    },
  });

  new Gauge({
    name: 'echomq_queue_paused',
    help: '1 while the queue is paused (workers claim nothing from it), else 0',
    labelNames: ['queue'],
    registers,
    collect() {
      return fill(this, (gauge, { queues }) => {
        for (const { queue, paused } of queues) gauge.set({ queue }, paused ? 1 : 0);
      });
    },
  });

  new Counter({
    name: 'echomq_transitions_total',
    help: 'Transitions of the queue, counted in Redis by the scripts for every process together (enqueued, claimed, completed, failed, dead, reaped, ...)',
    labelNames: ['queue', 'transition'],
    registers,
    collect() {
      return fill(this, (counter, { queues }) => {
        for (const { queue, transitions } of queues) {
          for (const [transition, value] of Object.entries(transitions)) {
            if (value > 0) counter.inc({ queue, transition }, value);
          }
        }
      });
    },
  });

  new Gauge({
    name: 'echomq_redis_up',
    help: '1 when every queue could be read from Redis for this scrape, else 0',
    registers,
    collect() {
      return fill(this, (gauge, { complete }) => gauge.set(complete ? 1 : 0));
    },
  });

  new Gauge({
    name: 'echomq_redis_read_duration_seconds',
    help: 'How long reading the queues from Redis took for the latest snapshot',
    registers,
    collect() {
      return fill(this, (gauge, { readMs }) => gauge.set(readMs / 1_000));
    },
  });
}
