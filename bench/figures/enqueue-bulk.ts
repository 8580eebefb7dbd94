import type { BenchContext } from '../support/context';
import { timedEnqueue } from '../support/cpu';
import { inBatches } from '../support/in-flight';
import { measurement, pick, type Measurement } from '../support/measurement';
import { makePayloads } from '../support/payload';
import { interleaved } from '../support/rounds';
import type { QueueSystem } from '../systems/types';

/** How the batch is sent, where a system's bulk call takes fewer jobs than a batch (EchoMQ's ENQUEUE_MANY_MAX). */
function splitNote(systems: readonly QueueSystem[], batch: number): string {
  const split = systems.flatMap((system) =>
    system.bulkCallMax !== undefined && system.bulkCallMax < batch
      ? [
          `${system.label}: ${Math.ceil(batch / system.bulkCallMax)} calls of at most ${system.bulkCallMax.toLocaleString('en-US')} at once per batch, its bulk limit`,
        ]
      : [],
  );
  return split.length === 0 ? '' : ` [${split.join('; ')}]`;
}

/**
 * Figure 2: enqueue through each system's bulk path, one batch in flight at a
 * time; jobs/s and the producer's Node CPU per job over the timed batches, after
 * one untimed warm-up batch.
 */
export async function enqueueBulk(ctx: BenchContext): Promise<Measurement[]> {
  const { jobs, batch } = ctx.config.bulk;
  const results = await interleaved(
    ctx,
    'bulk',
    async (system) => {
      const producer = await system.openProducer(ctx.redis.url, { completions: false });
      try {
        await producer.enqueueBulk(makePayloads(batch));
        const payloads = makePayloads(jobs, batch);
        return await timedEnqueue(jobs, () =>
          inBatches(payloads, batch, (slice) => producer.enqueueBulk(slice)),
        );
      } finally {
        await producer.close();
      }
    },
    (run) => `${Math.round(run.rate)} jobs/s, producer ${run.cpuPerJob.toFixed(1)} µs CPU/job`,
  );
  const setup =
    `batches of ${batch.toLocaleString('en-US')}, 1 batch in flight (${jobs.toLocaleString('en-US')} jobs)` +
    splitNote(ctx.systems, batch);
  return [
    measurement(
      'enqueue.bulk',
      `enqueue in bulk, ${setup}`,
      'jobs/s',
      'higher',
      pick(results, (run) => run.rate),
    ),
    measurement(
      'enqueue.bulk.producer_cpu',
      `producer Node CPU per enqueued job (process.cpuUsage of the producer process), enqueue in bulk, ${setup}`,
      'µs',
      'lower',
      pick(results, (run) => run.cpuPerJob),
    ),
  ];
}
