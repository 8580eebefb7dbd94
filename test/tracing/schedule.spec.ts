import type { INestApplication } from '@nestjs/common';
import { Processor, QueueService } from '@app/echomq';
import { claimJobs, completeJobs, queueKeys } from '@app/echomq/internal';
import { advanceSchedule } from '@app/echomq/schedules/advance-schedule';
import { upsertSchedule } from '@app/echomq/schedules/upsert-schedule';
import type { JobId } from '@app/echomq';
import type { Redis } from 'ioredis';
import { bootApp } from '../support/nest';
import { connect, idMinter, uniqueQueue } from '../support/redis';
import { parsedCarrier, TestTracing } from './support/otel';

const queue = uniqueQueue('trace-schedule');

// Completed rows retained, so the advance at claim always finds the occurrence's row (the
// second test covers one whose row is gone).
@Processor(queue, { retainCompletedMs: 60_000 })
class TickProcessor {
  process() {
    return 'tick';
  }
}

/**
 * A schedule's occurrences keep the context of the upsert that made the schedule: each one is
 * linked to the upsert's publish span, in a trace of its own.
 */
describe('tracing a schedule', () => {
  let tracing: TestTracing;
  let app: INestApplication;
  let redis: Redis;

  beforeAll(async () => {
    tracing = TestTracing.install();
    redis = connect();
    app = await bootApp([TickProcessor], { tracing: true });
  });
  afterAll(async () => {
    await app.close();
    await redis.quit();
    await tracing.uninstall();
  });

  const mint = idMinter(77);
  const depsOf = (queues: QueueService) => ({
    mintIds: (count: number) => Promise.resolve(Array.from({ length: count }, () => mint() as JobId)),
    repeat: () => ({ untilMs: Number.MAX_SAFE_INTEGER, retryUnavailable: false }),
    registerIfDue: (name: string) => queues.register(name),
    payloadLimitBytes: 1_000_000,
    // (QueueService passes the module option once schedule-surface.ts does; here it is given)
    tracing: true,
  });

  it("every occurrence carries the upsert's context, and its process span links to it without joining its trace", async () => {
    const queues = app.get(QueueService);
    const ctx = queues.context(queue);
    const deps = depsOf(queues);
    const upserted = await tracing.tracer.startActiveSpan('deploy', async (span) => {
      const result = await upsertSchedule(ctx, 'tick', { everyMs: 3_600_000 }, { data: {} }, deps);
      span.end();
      return result;
    });
    const [publish] = tracing.named(`${queue} publish`);
    expect(publish.attributes).toMatchObject({
      'messaging.message.id': upserted.nextId,
      'echomq.enqueue.outcome': 'created',
    });
    const keys = queueKeys(queue);
    const first = upserted.nextId;
    const carried = await redis.hget(keys.job(first), 'tc');
    expect(parsedCarrier(carried).spanId).toBe(publish.spanContext().spanId);

    // Time passes for the occurrence (its run-at rewritten into the past): the reaper promotes it.
    await redis.zadd(keys.schedule, 0, first);
    await expect(queues.waitFor(queue, first, 10_000)).resolves.toBe('tick');
    const process = await tracing.waitFor(
      () =>
        tracing.withAttribute('messaging.message.id', first).find((span) => span.name === `${queue} process`),
      "the occurrence's process span",
    );
    expect(process.attributes['echomq.schedule.key']).toBe('tick');
    expect(process.parentSpanContext).toBeUndefined();
    expect(process.spanContext().traceId).not.toBe(publish.spanContext().traceId);
    expect(process.links.map((link) => link.context.spanId)).toContain(publish.spanContext().spanId);

    // The occurrence its claim advanced to (beside the handler, so polled for) carries the same context.
    let next: string | null | undefined = first;
    for (const until = Date.now() + 10_000; next === first && Date.now() < until;) {
      next = (await queues.getSchedule(queue, 'tick'))?.nextId;
      if (next === first) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(next).not.toBe(first);
    expect(await redis.hget(keys.job(next!), 'tc')).toBe(carried);
  });

  it("the next occurrence carries the context its claim read when the claimed one's row is gone", async () => {
    const queues = app.get(QueueService);
    // A queue no processor serves: the claim, completion and advance are made here, in that order.
    const ctx = queues.context(uniqueQueue('trace-schedule-gone'));
    const deps = depsOf(queues);
    const { nextId: first } = await upsertSchedule(ctx, 'tick', { everyMs: 3_600_000 }, { data: {} }, deps);
    await redis.zadd(ctx.keys.schedule, 0, first);
    const { jobs } = await claimJobs(ctx, { count: 1, leaseMs: 30_000, claimantPrefix: 'sched' });
    expect(jobs.map((job) => job.id)).toEqual([first]);
    const carried = jobs[0].traceContext;
    expect(parsedCarrier(carried).traceId).toMatch(/^[0-9a-f]{32}$/);
    await completeJobs(ctx, [{ claim: jobs[0], result: '' }], 0);
    expect(await redis.exists(ctx.keys.job(first))).toBe(0);
    await expect(advanceSchedule(ctx, 'tick', first, deps, false, carried)).resolves.toBe('advanced');
    const next = (await queues.getSchedule(ctx.keys.queue, 'tick'))!.nextId!;
    expect(await redis.hget(ctx.keys.job(next), 'tc')).toBe(carried);
  });
});
