import type { BenchContext } from '../support/context';
import { timedEnqueue } from '../support/cpu';
import { runInFlight } from '../support/in-flight';
import { measurement, pick, type Measurement } from '../support/measurement';
import { makePayloads } from '../support/payload';
import { interleaved } from '../support/rounds';

/**
 * Figure 1: enqueue one job per call with a fixed number of calls in flight;
 * jobs/s and the producer's Node CPU per job over the timed jobs, after an
 * untimed warm-up on the same producer.
 */
export async function enqueueSingle(ctx: BenchContext): Promise<Measurement[]> {
  const { jobs, inFlight, warmUpJobs } = ctx.config.enqueue;
  const results = await interleaved(
    ctx,
    'enqueue',
    async (system) => {
      const producer = await system.openProducer(ctx.redis.url, { completions: false });
      try {
        const warmUp = makePayloads(warmUpJobs);
        await runInFlight(warmUpJobs, inFlight, (i) => producer.enqueue(warmUp[i]));
        const payloads = makePayloads(jobs, warmUpJobs);
        return await timedEnqueue(jobs, () =>
          runInFlight(jobs, inFlight, (i) => producer.enqueue(payloads[i])),
        );
      } finally {
        await producer.close();
      }
    },
    (run) => `${Math.round(run.rate)} jobs/s, producer ${run.cpuPerJob.toFixed(1)} µs CPU/job`,
  );
  const setup = `1 job per call, ${inFlight} calls in flight (${jobs.toLocaleString('en-US')} jobs)`;
  return [
    measurement(
      'enqueue.single',
      `enqueue, ${setup}`,
      'jobs/s',
      'higher',
      pick(results, (run) => run.rate),
    ),
    measurement(
      'enqueue.single.producer_cpu',
      `producer Node CPU per enqueued job (process.cpuUsage of the producer process), ${setup}`,
      'µs',
      'lower',
      pick(results, (run) => run.cpuPerJob),
    ),
  ];
}
