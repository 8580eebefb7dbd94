import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { Processor, QueueService, type Job } from '@app/echomq';
import { ProcessorExplorer } from '@app/echomq/internal';
import { EchoMqMetrics } from '@app/echomq/metrics';
import { deferred, DeferredMap } from '../worker/fixtures/support';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { eventually } from './support/eventually';
import { parseExposition, valueOf, type Exposition } from './support/exposition';

const queue = uniqueQueue('metrics-run');
/** Handlers wait on these (by job id) when the job's data says so. */
const gates = new DeferredMap<string>();
const started = new DeferredMap<void>();

@Processor(queue, { concurrency: 4, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 0 } })
class MeteredProcessor {
  async process(job: Job<{ kind: 'echo' | 'fail' | 'wait' }>) {
    if (job.data.kind === 'fail') throw new Error(`failure on attempt ${job.attempt}`);
    if (job.data.kind === 'wait') {
      started.get(job.id).resolve();
      return gates.get(job.id).promise;
    }
    return 'done';
  }
}

describe('metrics of a worker: its runtime, and what the scripts counted in Redis', () => {
  let app: INestApplication;
  let queues: QueueService;
  let metrics: EchoMqMetrics;

  beforeAll(async () => {
    // A key prefix of its own: the snapshot reads every queue of the prefix, so only this file's.
    app = await bootApp([MeteredProcessor], { keyPrefix: `met-${randomBytes(4).toString('hex')}` });
    queues = app.get(QueueService);
    metrics = app.get(EchoMqMetrics);
  });

  afterAll(async () => {
    gates.resolveAll('released');
    await app?.close();
  });

  const scrape = async (): Promise<Exposition> => parseExposition(await metrics.text());
  const events = () => app.get(ProcessorExplorer).requireLoop(queue).events;

  it('serves the exposition text with the Prometheus content type and typed families', async () => {
    expect(metrics.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    const { types } = await scrape();
    expect(Object.fromEntries(types)).toMatchObject({
      echomq_queue_jobs: 'gauge',
      echomq_lane_jobs: 'gauge',
      echomq_transitions_total: 'counter',
      echomq_claim_duration_seconds: 'histogram',
      echomq_jobs_claimed_total: 'counter',
      echomq_handler_duration_seconds: 'histogram',
      echomq_settlements_total: 'counter',
      echomq_reaped_leases_total: 'counter',
      echomq_redis_up: 'gauge',
    });
  });

  it('counts a completed job: settlement, handler histogram, claim, and the transitions in Redis', async () => {
    const completed = new Promise<string>((resolve) => events().once('completed', (id) => resolve(id)));
    const id = await queues.enqueue(queue, { kind: 'echo' });
    expect(await completed).toBe(id);

    const local = await scrape();
    expect(valueOf(local, 'echomq_settlements_total', { queue, outcome: 'completed' })).toBe(1);
    expect(valueOf(local, 'echomq_handler_duration_seconds_count', { queue, outcome: 'completed' })).toBe(1);
    // The histogram's +Inf bucket holds every observation.
    expect(
      valueOf(local, 'echomq_handler_duration_seconds_bucket', { queue, outcome: 'completed', le: '+Inf' }),
    ).toBe(1);
    expect(valueOf(local, 'echomq_jobs_claimed_total', { queue })).toBe(1);
    expect(valueOf(local, 'echomq_claim_duration_seconds_count', { queue })).toBeGreaterThanOrEqual(1);

    // Redis-derived values come from a snapshot at most a second old: wait for one read after the job.
    const redis = await eventually(
      scrape,
      (now) => valueOf(now, 'echomq_transitions_total', { queue, transition: 'completed' }) === 1,
      'the completed counter read from Redis',
    );
    expect(valueOf(redis, 'echomq_transitions_total', { queue, transition: 'enqueued' })).toBe(1);
    expect(valueOf(redis, 'echomq_transitions_total', { queue, transition: 'claimed' })).toBe(1);
    expect(valueOf(redis, 'echomq_redis_up')).toBe(1);
  });

  it('counts a job that fails, is retried once and dies', async () => {
    const dead = new Promise<void>((resolve) =>
      events().on('failed', (_id, _error, state) => state === 'dead' && resolve()),
    );
    await queues.enqueue(queue, { kind: 'fail' });
    await dead;

    const local = await scrape();
    expect(valueOf(local, 'echomq_settlements_total', { queue, outcome: 'retried' })).toBe(1);
    expect(valueOf(local, 'echomq_settlements_total', { queue, outcome: 'dead' })).toBe(1);
    expect(valueOf(local, 'echomq_handler_duration_seconds_count', { queue, outcome: 'dead' })).toBe(1);
    const redis = await eventually(
      scrape,
      (now) => valueOf(now, 'echomq_queue_jobs', { queue, set: 'dead' }) === 1,
      'the dead depth read from Redis',
    );
    expect(valueOf(redis, 'echomq_transitions_total', { queue, transition: 'failed' })).toBe(1);
    expect(valueOf(redis, 'echomq_transitions_total', { queue, transition: 'dead' })).toBe(1);
  });

  it('counts a STALE settlement: the job was removed while its handler ran, and its result is refused', async () => {
    const stale = deferred<string>();
    events().once('stale', (id) => stale.resolve(id));
    const id = await queues.enqueue(queue, { kind: 'wait' });
    await started.get(id).promise;
    await queues.remove(queue, id);
    // The handler ignores its aborted signal and returns: the completion finds the claim gone.
    gates.get(id).resolve('too late');
    expect(await stale.promise).toBe(id);

    const local = await scrape();
    expect(valueOf(local, 'echomq_settlements_total', { queue, outcome: 'stale' })).toBe(1);
    expect(valueOf(local, 'echomq_handler_duration_seconds_count', { queue, outcome: 'stale' })).toBe(1);
    // The complete script counted the refusal in Redis too.
    await eventually(
      scrape,
      (now) => valueOf(now, 'echomq_transitions_total', { queue, transition: 'stale' }) === 1,
      'the stale counter read from Redis',
    );
  });
});
