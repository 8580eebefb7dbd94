import { Gauge, type Registry } from 'prom-client';
import type { ClaimLoopReport } from '../worker/loop-report';

/**
 * This process's running handlers per queue, read from its claim loops at each scrape: how many
 * run now and how long the oldest has. A handler that never returns holds its slot for good
 * when the queue has no `timeoutMs` (the default), and this is where it shows:
 * `echomq_oldest_handler_seconds > 600` is an alert on a hung handler. 0 when none runs.
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
      for (const { queue, handlers } of loops()) this.set({ queue }, handlers.running);
    },
  });
  new Gauge({
    name: 'echomq_oldest_handler_seconds',
    help: "How long the oldest running handler of this process's claim loop has run, 0 when none runs",
    labelNames: ['queue'],
    registers,
    collect() {
      this.reset();
      for (const { queue, handlers } of loops()) this.set({ queue }, (handlers.oldestMs ?? 0) / 1_000);
    },
  });
}
