import type { INestApplication } from '@nestjs/common';
import { Processor, QueueService } from '@app/echomq';
import { claimJobs, completeJobs, queueKeys } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { bootApp } from '../support/nest';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import { EventTail } from '../worker/fixtures/support';
import { parsedCarrier, TestTracing } from './support/otel';

const queue = uniqueQueue('trace-schedule');

// Completed rows are not retained (the default), and the handler is fast: its completion often
// deletes the occurrence's row before the advance beside it runs, so the next occurrence keeps
// the upsert's context only because the worker passes the one its claim read.
@Processor(queue)
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
  let queues: QueueService;
  let redis: Redis;

  beforeAll(async () => {
    tracing = TestTracing.install();
    redis = connect();
    // The reaper's schedule sweep (which also advances) runs at boot and then not within the
    // test: every advance here is the worker's own, beside the handler.
    app = await bootApp([TickProcessor], { tracing: true, reaper: { intervalMs: 60_000 } });
    queues = app.get(QueueService);
  });
  afterAll(async () => {
    await app.close();
    await redis.quit();
    await tracing.uninstall();
  });

  it("every occurrence carries the upsert's context, and its process span links to it without joining its trace", async () => {
    const upserted = await tracing.tracer.startActiveSpan('deploy', async (span) => {
      const result = await queues.upsertSchedule(queue, 'tick', { everyMs: 3_600_000 }, { data: {} });
      span.end();
      return result;
    });
    const [publish] = tracing.named(`${queue} publish`);
    expect(publish.attributes).toMatchObject({
      'messaging.message.id': upserted.nextId,
      'echomq.enqueue.outcome': 'created',
    });
    const keys = queueKeys(queue);
    const carried = await redis.hget(keys.job(upserted.nextId), 'tc');
    expect(parsedCarrier(carried).spanId).toBe(publish.spanContext().spanId);

    // Three occurrences in a row: each is promoted (time passes for it), runs, and its row goes
    // with its completion; the one its claim advanced to carries the same context.
    const tail = await EventTail.open(redisUrl(), queue);
    const ran: string[] = [];
    let current: string = upserted.nextId;
    try {
      for (let run = 0; run < 3; run++) {
        await queues.promote(queue, current);
        const { ids: next } = await tail.next((event) => event.type === 'enqueued');
        await expect(queues.waitFor(queue, current, 10_000)).resolves.toBe('tick');
        expect(next).not.toBe(current);
        expect(await redis.hget(keys.job(next), 'tc')).toBe(carried);
        ran.push(current);
        current = next;
      }
    } finally {
      tail.close();
    }
    for (const id of ran) {
      const process = await tracing.waitFor(
        () =>
          tracing.withAttribute('messaging.message.id', id).find((span) => span.name === `${queue} process`),
        `the process span of occurrence ${id}`,
      );
      expect(process.attributes['echomq.schedule.key']).toBe('tick');
      expect(process.parentSpanContext).toBeUndefined();
      expect(process.spanContext().traceId).not.toBe(publish.spanContext().traceId);
      expect(process.links.map((link) => link.context.spanId)).toContain(publish.spanContext().spanId);
    }
    // Not retained: the occurrences that ran left no row.
    expect(await Promise.all(ran.map((id) => redis.exists(keys.job(id))))).toEqual([0, 0, 0]);
  });

  it("the next occurrence carries the context its claim read when the claimed one's row is gone", async () => {
    // A queue no processor serves: the claim, completion and advance are made here, in that order.
    const other = uniqueQueue('trace-schedule-gone');
    const ctx = queues.context(other);
    const { nextId: first } = await queues.upsertSchedule(
      other,
      'tick',
      { everyMs: 3_600_000 },
      { data: {} },
    );
    await queues.promote(other, first);
    const { jobs } = await claimJobs(ctx, { count: 1, leaseMs: 30_000, claimantPrefix: 'sched' });
    expect(jobs.map((job) => job.id)).toEqual([first]);
    const carried = jobs[0].traceContext;
    expect(parsedCarrier(carried).traceId).toMatch(/^[0-9a-f]{32}$/);
    await completeJobs(ctx, [{ claim: jobs[0], result: '' }], 0);
    expect(await redis.exists(ctx.keys.job(first))).toBe(0);
    await expect(queues.advanceSchedule(other, 'tick', first, false, carried)).resolves.toBe('advanced');
    const next = (await queues.getSchedule(other, 'tick'))!.nextId!;
    expect(await redis.hget(ctx.keys.job(next), 'tc')).toBe(carried);
  });
});
