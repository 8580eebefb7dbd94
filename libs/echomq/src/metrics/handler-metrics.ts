import { Gauge, type Registry } from 'prom-client';
import { logicalQueueOf } from '../keyspace';
import type { ClaimLoopReport } from '../worker/loop-report';

/** Handlers running per queue, and the oldest one's age: a partitioned queue's loops added up under its name. */
function handlersByQueue(
  loops: readonly ClaimLoopReport[],
): Map<string, { running: number; oldestMs: number }> {
  const byQueue = new Map<string, { running: number; oldestMs: number }>();
  for (const { queue, handlers } of loops) {
    const name = logicalQueueOf(queue);
    const seen = byQueue.get(name) ?? { running: 0, oldestMs: 0 };
    byQueue.set(name, {
      running: seen.running + handlers.running,
      oldestMs: Math.max(seen.oldestMs, handlers.oldestMs ?? 0),
    });
  }
  return byQueue;
}

/**
 * This process's running handlers per queue, read from its claim loops at each scrape: how many
 * run now and how long the oldest has. A handler that never returns holds its slot for good
 * when the queue has no `timeoutMs` (the default), and this is where it shows:
 * `echomq_oldest_handler_seconds > 600` is an alert on a hung handler. 0 when none runs. A
 * partitioned queue served by a loop per partition is reported once, under its own name.
 */
export function registerHandlerMetrics(registry: Registry, loops: () => readonly ClaimLoopReport[]): void {
  const registers = [registry];
  new Gauge({
    name: 'echomq_handlers_running',
    help: "Handlers of this process's claim loop running now (those past their timeout included)",
    labelNames: ['queue'],
    registers,
    collect() {
      this.reset();
      for (const [queue, { running }] of handlersByQueue(loops())) this.set({ queue }, running);
    },
  });
  new Gauge({
    name: 'echomq_oldest_handler_seconds',
    help: "How long the oldest running handler of this process's claim loop has run, 0 when none runs",
    labelNames: ['queue'],
    registers,
    collect() {
      this.reset();
      for (const [queue, { oldestMs }] of handlersByQueue(loops())) this.set({ queue }, oldestMs / 1_000);
    },
  });
}
