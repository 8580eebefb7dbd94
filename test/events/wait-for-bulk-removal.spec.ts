import type { INestApplication } from '@nestjs/common';
import { JobNotFoundError, QueueService } from '@app/echomq';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';

/** A wait on a job that a bulk control removes ends at once, as it does for remove. */

/**
 * Starts a wait that has certainly read the job (live) before returning, so only the event
 * of the removal can end it: the queue's reader runs already (a subscription), the wait's
 * first read is sent within the microtasks after waitFor, and a read sent after it on the
 * same connection answers after it.
 */
async function establishedWait(
  queue: string,
  id: string,
): Promise<{ waiting: Promise<unknown>; stop: () => void }> {
  const stop = await queues.subscribe(queue, () => undefined);
  const waiting = queues.waitFor(queue, id, 60_000);
  waiting.catch(() => undefined);
  await new Promise((resolve) => setImmediate(resolve));
  expect((await queues.getJob(queue, id))?.state).toMatch(/pending|schedule/);
  return { waiting, stop };
}
let app: INestApplication;
let queues: QueueService;

beforeAll(async () => {
  app = await bootApp([]);
  queues = app.get(QueueService);
});
afterAll(() => app.close());

describe('waitFor and bulk removals', () => {
  it('rejects with JobNotFoundError when drain removes the job', async () => {
    const queue = uniqueQueue('wait-drain');
    const id = await queues.enqueue(queue, 'x');
    const { waiting, stop } = await establishedWait(queue, id);
    expect(await queues.drain(queue)).toBe(1);
    await expect(waiting).rejects.toBeInstanceOf(JobNotFoundError);
    stop();
  });

  it('rejects with JobNotFoundError when obliterate removes the job', async () => {
    const queue = uniqueQueue('wait-obliterate');
    const id = await queues.enqueue(queue, 'x', { delayMs: 3_600_000 });
    const { waiting, stop } = await establishedWait(queue, id);
    expect(await queues.obliterate(queue)).toEqual({ removed: 1 });
    await expect(waiting).rejects.toBeInstanceOf(JobNotFoundError);
    stop();
  });
});
