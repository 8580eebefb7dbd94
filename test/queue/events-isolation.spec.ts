import { Logger, type INestApplication } from '@nestjs/common';
import { completeJob, QueueService, type QueueEvent } from '@app/echomq/internal';
import { claimSome } from '../support/claims';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';

/** Records a queue's events and resolves a promise when one matching a predicate arrives. */
function eventLog() {
  const seen: QueueEvent[] = [];
  const pending: { match: (event: QueueEvent) => boolean; resolve: (event: QueueEvent) => void }[] = [];
  return {
    seen,
    listener(event: QueueEvent): void {
      seen.push(event);
      for (const waiter of pending.filter((p) => p.match(event))) {
        pending.splice(pending.indexOf(waiter), 1);
        waiter.resolve(event);
      }
    },
    /** The first event (seen or to come) that matches; fails after `ms` if none arrives. */
    next(match: (event: QueueEvent) => boolean, ms = 5_000): Promise<QueueEvent> {
      const already = seen.find(match);
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching event within ${ms} ms`)), ms);
        pending.push({
          match,
          resolve: (event) => {
            clearTimeout(timer);
            resolve(event);
          },
        });
      });
    },
  };
}

describe('event listeners are isolated from each other and from waitFor', () => {
  let app: INestApplication;
  let queues: QueueService;

  beforeAll(async () => {
    app = await bootApp([]);
    queues = app.get(QueueService);
  });
  afterAll(async () => {
    await app.close();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('a listener that throws, and one that rejects, stop no other listener and no wait, now or later', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const queue = uniqueQueue('iso');
    const ctx = queues.context(queue);
    const log = eventLog();
    // Subscribed first, so on a reader that lets errors escape they run before everyone else.
    const stopSync = await queues.subscribe(queue, () => {
      throw new Error('sync boom');
    });
    const stopAsync = await queues.subscribe(queue, async () => {
      await Promise.resolve();
      throw new Error('async boom');
    });
    const stopLog = await queues.subscribe(queue, (event) => log.listener(event));

    const first = await queues.enqueue(queue, 'first');
    const wait = queues.waitFor(queue, first, 10_000);
    const [claim] = await claimSome(ctx);
    // No row is kept, so only the 'completed' event can tell the wait the result.
    await completeJob(ctx, claim, JSON.stringify('done'), 0);
    await expect(wait).resolves.toBe('done');
    await log.next((e) => e.type === 'completed' && e.ids.includes(first));

    // Later events still reach everyone.
    const second = await queues.enqueue(queue, 'second');
    await log.next((e) => e.type === 'enqueued' && e.ids.includes(second));
    expect(log.seen.map((e) => e.type)).toEqual(['enqueued', 'claimed', 'completed', 'enqueued']);

    const messages = logged.mock.calls.map(([message]) => String(message));
    expect(messages.some((m) => m.includes('sync boom'))).toBe(true);
    expect(messages.some((m) => m.includes('async boom'))).toBe(true);
    stopSync();
    stopAsync();
    stopLog();
  });
});
