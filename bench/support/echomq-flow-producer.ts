import { Module, type DynamicModule, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EchoMqModule, QueueService, type JobToEnqueue, type RateLimit } from '@app/echomq/internal';
import { BENCH_QUEUE } from '../systems/types';
import type { JobData } from './payload';

@Module({})
class FlowProducerModule {
  static forUrl(url: string): DynamicModule {
    return {
      module: FlowProducerModule,
      imports: [
        EchoMqModule.forRoot({ connection: { url }, queues: { [BENCH_QUEUE]: { retainCompletedMs: 0 } } }),
      ],
    };
  }
}

/**
 * The producer side of the flow-control figures: EchoMQ's QueueService in a Nest application
 * context with no processors, like the EchoMQ adapter's producer (systems/echomq.ts), but
 * with the enqueue options and admin calls only EchoMQ has (lanes, priorities, shared limits),
 * which the systems' common Producer interface leaves out.
 */
export class EchoMqFlowProducer {
  private constructor(
    private readonly app: INestApplicationContext,
    private readonly queues: QueueService,
  ) {}

  static async open(url: string): Promise<EchoMqFlowProducer> {
    const app = await NestFactory.createApplicationContext(FlowProducerModule.forUrl(url), {
      logger: ['error', 'warn'],
      abortOnError: false,
    });
    return new EchoMqFlowProducer(app, app.get(QueueService));
  }

  /** One enqueueMany call: at most ENQUEUE_MANY_MAX jobs. */
  async enqueueMany(jobs: readonly JobToEnqueue<JobData>[]): Promise<void> {
    await this.queues.enqueueMany(BENCH_QUEUE, jobs);
  }

  /** Stored in Redis: every worker of the queue enforces it, for all of them together. */
  async setRateLimit(limit: RateLimit): Promise<void> {
    await this.queues.setLimits(BENCH_QUEUE, { rateLimit: limit });
  }

  async rateLimit(): Promise<RateLimit | null> {
    return (await this.queues.getLimits(BENCH_QUEUE)).rateLimit;
  }

  /** Jobs waiting (in any lane and level), active or scheduled. */
  async unfinished(): Promise<number> {
    const counts = await this.queues.counts(BENCH_QUEUE);
    return counts.pending + counts.active + counts.schedule;
  }

  async close(): Promise<void> {
    await this.app.close();
  }
}
