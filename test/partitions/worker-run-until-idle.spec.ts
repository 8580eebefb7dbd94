import type { INestApplication } from '@nestjs/common';
import {
  ProcessorExplorer,
  QueueService,
  enqueueJobs,
  partitionTagOf,
  type Job,
  type JobId,
} from '@app/echomq/internal';
import { EchoMqTestKit } from '@app/echomq/testing';
import { bootApp } from '../support/nest';
import { jobRecord } from '../support/assertions';
import { idMinter, uniqueQueue } from '../support/redis';
import { processorClass } from '../worker/fixtures/support';
import { useApps } from '../support/app-suite';

/** The testing kit's runUntilIdle on a partitioned queue: every partition run, and idle only when all are. */

const apps = useApps();

async function boot(
  queue: string,
  handler: (job: Job) => unknown,
  partitions = 3,
): Promise<INestApplication> {
  const options = {
    partitions,
    maxAttempts: 2,
    backoff: { type: 'fixed' as const, delayMs: 60_000 },
    retainCompletedMs: 60_000,
  };
  const app = await bootApp([processorClass(queue, options, handler)], {
    startProcessors: false,
    shutdownGraceMs: 200,
  });
  apps.push(app);
  return app;
}

describe('runUntilIdle on a partitioned queue', () => {
  it('runs the jobs of every partition, leaves the delayed ones, then runs them with includeDelayed', async () => {
    const queue = uniqueQueue('kit-part');
    const seen: { queue: string; partition: number | undefined }[] = [];
    const app = await boot(queue, (job) => {
      seen.push({ queue: job.queue, partition: job.partition });
      return job.partition;
    });
    const kit = EchoMqTestKit.from(app);
    const queues = app.get(QueueService);
    const due: JobId[] = [];
    for (let n = 0; n < 9; n++) due.push(await queues.enqueue(queue, { n }));
    const delayed: JobId[] = [];
    for (let n = 0; n < 3; n++) delayed.push(await queues.enqueue(queue, { n }, { delayMs: 3_600_000 }));
    expect(new Set(delayed.map(partitionTagOf))).toEqual(new Set([0, 1, 2]));
    // The kit reads the queue whole: every partition, merged oldest first.
    expect((await kit.enqueued(queue)).map((view) => view.id)).toEqual([...due, ...delayed]);

    const first = await kit.runUntilIdle(queue);
    expect(first).toMatchObject({ completed: 9, failed: 0, scheduled: 3 });
    expect(new Set(first.outcomes.map((outcome) => outcome.id))).toEqual(new Set(due));
    expect(new Set(seen.map((run) => run.partition))).toEqual(new Set([0, 1, 2]));
    expect(app.get(ProcessorExplorer).isServing(queue)).toBe(false);
    expect((await kit.completed(queue)).map((view) => view.id)).toEqual(due);
    expect((await kit.enqueued(queue)).map((view) => view.id)).toEqual(delayed);

    const second = await kit.runUntilIdle(queue, { includeDelayed: true });
    expect(second).toMatchObject({ completed: 3, scheduled: 0 });
    expect(new Set(second.outcomes.map((outcome) => outcome.id))).toEqual(new Set(delayed));
    expect(new Set(seen.map((run) => run.queue))).toEqual(new Set([queue]));
    expect(await queues.counts(queue)).toMatchObject({ pending: 0, active: 0, schedule: 0 });
  });

  it('runs a failing job of any partition through its retries with includeDelayed', async () => {
    const queue = uniqueQueue('kit-part-fail');
    const app = await boot(queue, (job) => {
      if ((job.data as { fail: boolean }).fail) throw new Error(`no (partition ${job.partition})`);
      return 'ok';
    });
    const kit = EchoMqTestKit.from(app);
    const queues = app.get(QueueService);
    // One call each: the round robin puts them in three different partitions.
    const failing = await queues.enqueue(queue, { fail: true });
    await queues.enqueue(queue, { fail: false });
    await queues.enqueue(queue, { fail: false });

    const summary = await kit.runUntilIdle(queue, { includeDelayed: true });
    expect(summary).toMatchObject({ completed: 2, failed: 2, dead: 1, scheduled: 0 });
    await kit.expectDead(queue, { id: failing });
  });

  it('runs jobs that reached the queue itself after the boot, giving it a loop first', async () => {
    const queue = uniqueQueue('kit-part-late');
    const partitions: (number | undefined)[] = [];
    const app = await boot(queue, (job) => {
      partitions.push(job.partition);
      return true;
    });
    const kit = EchoMqTestKit.from(app);
    const explorer = app.get(ProcessorExplorer);
    const queues = app.get(QueueService);
    expect(explorer.loopReports().map((report) => report.queue)).not.toContain(queue);
    // What a producer of a release that knows no partitions does: the enqueue script on the queue itself.
    const mint = idMinter();
    await enqueueJobs(queues.context(queue), [jobRecord(mint()), jobRecord(mint())], 60_000);
    await queues.enqueue(queue, { n: 0 });

    const summary = await kit.runUntilIdle(queue);
    expect(summary.completed).toBe(3);
    expect(explorer.loopReports().map((report) => report.queue)).toContain(queue);
    expect(partitions.filter((partition) => partition === undefined)).toHaveLength(2);
    expect(await queues.counts(queue)).toMatchObject({ pending: 0, active: 0 });
  });
});
