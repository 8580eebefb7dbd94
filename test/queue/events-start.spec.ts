import type { INestApplication } from '@nestjs/common';
import { completeJob, QueueService, type QueueEvent } from '@app/echomq/internal';
import { claimSome } from '../support/claims';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';

const SKEW_MS = 120_000;

/** Resolves with the first event that matches; fails after `ms` if none arrives. */
function nextEvent(
  queues: QueueService,
  queue: string,
  match: (event: QueueEvent) => boolean,
  ms = 5_000,
): { started: Promise<() => void>; event: Promise<QueueEvent> } {
  let resolveEvent!: (event: QueueEvent) => void;
  const event = new Promise<QueueEvent>((resolve, reject) => {
    resolveEvent = resolve;
    setTimeout(() => reject(new Error(`no matching event within ${ms} ms`)), ms).unref();
  });
  const started = queues.subscribe(queue, (e) => {
    if (match(e)) resolveEvent(e);
  });
  return { started, event };
}

describe('the event reader starts from the server clock', () => {
  let app: INestApplication;
  let queues: QueueService;

  beforeAll(async () => {
    app = await bootApp([]);
    queues = app.get(QueueService);
  });
  afterAll(async () => {
    await app.close();
  });

  it('a reader started while the client clock runs 2 minutes ahead sees the last minute and what follows', async () => {
    const queue = uniqueQueue('skew');
    const ctx = queues.context(queue);
    // Finished with no row kept, before anyone listened: only the stream knows its result.
    const early = await queues.enqueue(queue, 'early');
    const [claim] = await claimSome(ctx);
    await completeJob(ctx, claim, JSON.stringify('early result'), 0);

    const realNow = Date.now.bind(Date);
    const skew = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + SKEW_MS);
    let later: ReturnType<typeof nextEvent>;
    let unsubscribe: () => void;
    try {
      later = nextEvent(
        queues,
        queue,
        (e) => e.type === 'enqueued' && e.ids.length === 1 && e.ids[0] !== early,
      );
      unsubscribe = await later.started; // the reader starts here, under the skewed clock
    } finally {
      skew.mockRestore();
    }

    await expect(queues.waitFor(queue, early, 5_000)).resolves.toBe('early result');
    const id = await queues.enqueue(queue, 'later');
    await expect(later.event).resolves.toMatchObject({ type: 'enqueued', ids: [id] });
    unsubscribe();
  });
});
