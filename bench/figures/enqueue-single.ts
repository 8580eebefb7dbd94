import { wallNow } from '../support/clock';
import type { BenchContext } from '../support/context';
import { runInFlight } from '../support/in-flight';
import { measurement, type Measurement } from '../support/measurement';
import { makePayloads } from '../support/payload';
import { interleaved } from '../support/rounds';

/**
 * Figure 1: enqueue one job per call with a fixed number of calls in flight;
 * jobs/s over the timed jobs, after an untimed warm-up on the same producer.
 */
export async function enqueueSingle(ctx: BenchContext): Promise<Measurement[]> {
  const { jobs, inFlight, warmUpJobs } = ctx.config.enqueue;
  const rates = await interleaved(
    ctx,
    'enqueue',
    async (system) => {
      const producer = await system.openProducer(ctx.redis.url, { completions: false });
      try {
        const warmUp = makePayloads(warmUpJobs);
        await runInFlight(warmUpJobs, inFlight, (i) => producer.enqueue(warmUp[i]));
        const payloads = makePayloads(jobs, warmUpJobs);
        const startedAt = wallNow();
        await runInFlight(jobs, inFlight, (i) => producer.enqueue(payloads[i]));
        return jobs / ((wallNow() - startedAt) / 1000);
      } finally {
        await producer.close();
      }
    },
    (rate) => `${Math.round(rate)} jobs/s`,
  );
  return [
    measurement(
      'enqueue.single',
      `enqueue, 1 job per call, ${inFlight} calls in flight (${jobs.toLocaleString('en-US')} jobs)`,
      'jobs/s',
      'higher',
      rates,
    ),
  ];
}
