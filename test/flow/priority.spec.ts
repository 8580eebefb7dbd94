import type { INestApplication } from '@nestjs/common';
import { compareIds, QueueService, type Job, type JobId } from '@app/echomq';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { closeAll, processorClass } from '../worker/fixtures/support';

const PRODUCERS = 3;
const BATCHES_PER_PRODUCER = 4;
const BATCH_SIZE = 10;
const SINGLES_PER_PRODUCER = 5;

/** Pairs out of order: a lower priority before a higher, or a later id before an earlier one of its level. */
function outOfOrder(started: readonly { id: string; priority: number }[]): string[] {
  const problems: string[] = [];
  for (let i = 1; i < started.length; i++) {
    const [before, after] = [started[i - 1], started[i]];
    const wrong =
      before.priority < after.priority ||
      (before.priority === after.priority && compareIds(before.id, after.id) > 0);
    if (wrong) problems.push(`#${i}: ${before.id}/p${before.priority} then ${after.id}/p${after.priority}`);
  }
  return problems;
}

describe('flow control: priorities', () => {
  const apps: INestApplication[] = [];

  afterEach(async () => {
    await closeAll(apps.splice(0));
  });

  it('starts jobs enqueued at once by several producers highest priority first, first in first out within a level', async () => {
    const queue = uniqueQueue('prio');
    const started: { id: string; priority: number }[] = [];
    const Worker = processorClass(queue, { concurrency: 1 }, (job: Job) => {
      started.push({ id: job.id, priority: job.priority });
    });
    apps.push(await bootApp([Worker]));
    for (let n = 0; n < PRODUCERS; n++) apps.push(await bootApp([]));
    const producers = apps.slice(1).map((app) => app.get(QueueService));
    await producers[0].pause(queue);

    // Every producer sends its batches and single jobs at the same time, all producers at once,
    // with priorities spread over 0..9 so that each level gets jobs from several producers.
    let sequence = 0;
    const priority = (): number => (sequence++ * 7) % 10;
    const sends: Promise<JobId[]>[] = producers.flatMap((queues) => [
      ...Array.from({ length: BATCHES_PER_PRODUCER }, () =>
        queues.enqueueMany(
          queue,
          Array.from({ length: BATCH_SIZE }, (_, n) => ({ data: n, priority: priority() })),
        ),
      ),
      ...Array.from({ length: SINGLES_PER_PRODUCER }, async () => [
        await queues.enqueue(queue, 'single', { priority: priority() }),
      ]),
    ]);
    const ids = (await Promise.all(sends)).flat();
    expect(ids).toHaveLength(PRODUCERS * (BATCHES_PER_PRODUCER * BATCH_SIZE + SINGLES_PER_PRODUCER));
    expect(started).toEqual([]);

    await producers[0].resume(queue);
    await Promise.all(ids.map((id) => producers[0].waitFor(queue, id, 20_000)));
    expect(started).toHaveLength(ids.length);
    expect(new Set(started.map((job) => job.priority))).toEqual(new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
    expect(outOfOrder(started)).toEqual([]);
  });
});
