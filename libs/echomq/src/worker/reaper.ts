import { Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { QueueService } from '../queue/queue.service';
import { promoteDue, reapExpired } from '../scripts';

const INTERVAL_NAME = 'echomq:reaper';
/** Script calls per queue per tick and per kind; a backlog larger than this waits for the next tick. */
const CALLS_PER_TICK = 10;

/**
 * Returns expired leases to pending (or dead) and promotes due scheduled jobs, for
 * every known queue, on an interval registered with @nestjs/schedule. Runs in every
 * process that hosts processors; the scripts are idempotent, so concurrent reapers
 * are safe. Each process starts at a random phase so reapers do not tick together.
 */
@Injectable()
export class Reaper {
  private readonly logger = new Logger('EchoMQ');
  private starter?: NodeJS.Timeout;
  private ticking = false;
  private served: readonly string[] = [];

  constructor(
    private readonly queues: QueueService,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  /** Starts ticking; `served` are the queues this process serves, reaped even if the registry lost them. */
  start(served: readonly string[] = []): void {
    this.served = served;
    const every = this.queues.settings.reaperIntervalMs;
    this.starter = setTimeout(() => {
      this.scheduler.addInterval(
        INTERVAL_NAME,
        setInterval(() => void this.tick(), every),
      );
    }, Math.random() * every);
  }

  stop(): void {
    clearTimeout(this.starter);
    if (this.scheduler.doesExist('interval', INTERVAL_NAME)) this.scheduler.deleteInterval(INTERVAL_NAME);
  }

  /** One pass over every known queue. Errors are logged per queue; the next tick runs regardless. */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const batch = this.queues.settings.reaperBatch;
      // Re-register the served queues every tick: a Redis that lost its data (a restart
      // without persistence) also lost the registry, and their expired leases must still be reaped.
      if (this.served.length > 0) await this.queues.reregister(this.served);
      const queues = new Set([...this.served, ...(await this.queues.listQueues())]);
      for (const queue of queues) {
        try {
          const ctx = this.queues.context(queue);
          for (let call = 0; call < CALLS_PER_TICK && (await reapExpired(ctx, batch)).more; call++);
          for (let call = 0; call < CALLS_PER_TICK && (await promoteDue(ctx, batch)).more; call++);
        } catch (error) {
          this.logger.warn(`Reaper on queue ${queue}: ${(error as Error).message}`);
        }
      }
    } catch (error) {
      this.logger.warn(`Reaper: ${(error as Error).message}`);
    } finally {
      this.ticking = false;
    }
  }
}
