import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService, queueKeys } from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { closeAll } from '../worker/fixtures/support';
import { markersOf, type CancelJobData } from './fixtures/cancel-worker-config';
import { CancelChild } from './support/cancel-child';
import { removedAt } from './support/cancels';

/** Far below the child's heartbeat (every 20 s of its 60 s lease): only the cancels stream explains an abort this soon. */
const PROMPT_MS = 2_000;
const WAIT_S = 10;

/**
 * Removing an active job from one process aborts its handler in the process that runs it: a
 * worker child with a one-minute lease, and the removal made here. The delay is measured on
 * the Redis clock, from the remove (its 'removed' event, written by the call) to the handler's
 * abort listener (which stamps the server time), and printed; only a generous bound is asserted.
 */
describe('cancellation across processes', () => {
  let producer: INestApplication;
  let queues: QueueService;
  let redis: Redis;
  let child: CancelChild;
  const queue = uniqueQueue('xcancel');
  const markers = markersOf(queue);
  const ids: string[] = [];

  beforeAll(async () => {
    producer = await bootApp([]);
    queues = producer.get(QueueService);
    redis = connect();
    child = CancelChild.spawn(queue);
    await child.ready();
  }, 60_000);

  afterAll(async () => {
    await child.stop();
    await redis.del(...markers.all(ids));
    await redis.quit();
    await closeAll([producer]);
  });

  /** Enqueues a job and waits until the child's handler runs it. */
  async function running(data: CancelJobData): Promise<string> {
    const id = await queues.enqueue(queue, data);
    ids.push(id);
    const started = await redis.blpop(markers.started, WAIT_S);
    expect(started?.[1]).toBe(id);
    return id;
  }

  /**
   * Removes the job, then returns the delay from the remove to the handler's abort on the Redis
   * clock. The remove ran before its call returned, so this bounds the delay from the return too.
   */
  async function removeAndMeasure(id: string): Promise<number> {
    await expect(queues.remove(queue, id)).resolves.toBe('active');
    const aborted = await redis.blpop(markers.aborted, WAIT_S);
    if (!aborted) throw new Error(`the handler of ${id} was not aborted within ${WAIT_S} s`);
    return Number(aborted[1]) - (await removedAt(redis, queueKeys(queue).events, id));
  }

  it('aborts the handler in the other process within a round trip or two, and its late complete is STALE', async () => {
    const id = await running({ mode: 'obey' });
    const delay = await removeAndMeasure(id);
    console.log(`cross-process cancel: handler aborted ${delay} ms after the remove ran (Redis clock)`);
    expect(delay).toBeLessThan(PROMPT_MS);
    expect((await redis.blpop(markers.reasons, WAIT_S))?.[1]).toMatch(/removed/);

    // The handler returned at once; its complete found the claim gone.
    expect((await redis.blpop(markers.outcomes, WAIT_S))?.[1]).toBe(`stale ${id}`);
    expect(await queues.getJob(queue, id)).toBeUndefined();
    expect(await queues.metrics(queue)).toMatchObject({ removed: 1 });
    expect((await queues.metrics(queue)).completed ?? 0).toBe(0);
  });

  it('still cannot complete a job whose handler ignores its signal and returns later', async () => {
    const id = await running({ mode: 'ignore' });
    expect(await removeAndMeasure(id)).toBeLessThan(PROMPT_MS);

    await redis.rpush(markers.go(id), 'go');
    expect((await redis.blpop(markers.outcomes, WAIT_S))?.[1]).toBe(`stale ${id}`);
    expect(await queues.getJob(queue, id)).toBeUndefined();
    expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
  });
});
