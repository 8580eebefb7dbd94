import type { INestApplication } from '@nestjs/common';
import { QueueService, type Job, type JobToEnqueue } from '@app/echomq';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { closeAll, processorClass } from '../worker/fixtures/support';

describe('flow control: pausing one lane', () => {
  let app: INestApplication | undefined;

  afterEach(async () => {
    await closeAll([app]);
    app = undefined;
  });

  it("keeps a paused lane's jobs pending while the other lanes drain, and starts them once it is resumed", async () => {
    const queue = uniqueQueue('lanepause');
    const started: { id: string; lane: string }[] = [];
    const Worker = processorClass(queue, { concurrency: 2 }, (job: Job) => {
      started.push({ id: job.id, lane: job.lane });
      return job.lane;
    });
    app = await bootApp([Worker]);
    const queues = app.get(QueueService);
    await queues.pauseLane(queue, 'paused');

    // Interleaved, so a paused lane served anyway would start among the very first jobs.
    const lanes = ['paused', 'a', 'b'];
    const jobs: JobToEnqueue<number>[] = [];
    for (let n = 0; n < 10; n++) for (const lane of lanes) jobs.push({ data: n, lane });
    const ids = await queues.enqueueMany(queue, jobs);
    const idsOf = (lane: string): string[] => ids.filter((_, index) => jobs[index].lane === lane);

    const others = [...idsOf('a'), ...idsOf('b')];
    await Promise.all(others.map((id) => queues.waitFor(queue, id, 15_000)));
    expect(started.filter((job) => job.lane === 'paused')).toEqual([]);
    expect(await queues.counts(queue)).toEqual({ pending: 10, active: 0, schedule: 0, dead: 0 });
    expect(await queues.lanes(queue)).toEqual([
      expect.objectContaining({ lane: 'paused', pending: 10, active: 0, paused: true }),
    ]);

    await queues.resumeLane(queue, 'paused');
    const results = await Promise.all(idsOf('paused').map((id) => queues.waitFor(queue, id, 15_000)));
    expect(results).toEqual(idsOf('paused').map(() => 'paused'));
    const startedPaused = started.filter((job) => job.lane === 'paused').map((job) => job.id);
    expect(startedPaused.sort()).toEqual(idsOf('paused').sort());
    expect(started).toHaveLength(30);
    expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    expect(await queues.lanes(queue)).toEqual([]);
  });
});
