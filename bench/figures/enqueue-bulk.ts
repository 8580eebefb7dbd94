import { wallNow } from '../support/clock';
import type { BenchContext } from '../support/context';
import { inBatches } from '../support/in-flight';
import { measurement, type Measurement } from '../support/measurement';
import { makePayloads } from '../support/payload';
import { interleaved } from '../support/rounds';

/**
 * Figure 2: enqueue through each system's bulk path, one batch in flight at a
 * time; jobs/s over the timed batches, after one untimed warm-up batch.
 */
export async function enqueueBulk(ctx: BenchContext): Promise<Measurement[]> {
  const { jobs, batch } = ctx.config.bulk;
  const rates = await interleaved(
    ctx,
    'bulk',
    async (system) => {
      const producer = await system.openProducer(ctx.redis.url, { completions: false });
      try {
        await producer.enqueueBulk(makePayloads(batch));
        const payloads = makePayloads(jobs, batch);
        const startedAt = wallNow();
        await inBatches(payloads, batch, (slice) => producer.enqueueBulk(slice));
        return jobs / ((wallNow() - startedAt) / 1000);
      } finally {
        await producer.close();
      }
    },
    (rate) => `${Math.round(rate)} jobs/s`,
  );
  return [
    measurement(
      'enqueue.bulk',
      `enqueue in bulk, batches of ${batch.toLocaleString('en-US')}, 1 batch in flight (${jobs.toLocaleString('en-US')} jobs)`,
      'jobs/s',
      'higher',
      rates,
    ),
  ];
}
