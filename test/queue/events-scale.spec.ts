import type { INestApplication } from '@nestjs/common';
import { completeJobs, QueueService } from '@app/echomq/internal';
import type { QueueEventReaders } from '@app/echomq/events/event-readers';
import { claimSome } from '../support/claims';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';

const WAITS = 5_000;
const CHUNK = 500;

describe('waits are looked up by job id', () => {
  let app: INestApplication;
  let queues: QueueService;

  beforeAll(async () => {
    app = await bootApp([]);
    queues = app.get(QueueService);
  });
  afterAll(async () => {
    await app.close();
  });

  it(`${WAITS} waits on different jobs all resolve, and one event calls only its own wait`, async () => {
    const queue = uniqueQueue('many-waits');
    const ctx = queues.context(queue);
    const ids: string[] = [];
    for (let i = 0; i < WAITS; i += CHUNK) {
      ids.push(
        ...(await queues.enqueueMany(
          queue,
          Array.from({ length: CHUNK }, (_, j) => ({ data: i + j })),
        )),
      );
    }
    const readers = (queues as unknown as { readers: QueueEventReaders }).readers;
    const reader = await readers.reader(queue);
    const waits = ids.map((id) => queues.waitFor(queue, id, 60_000));
    // Registration happens in the microtasks after each call; this lets them all run.
    await new Promise((resolve) => setImmediate(resolve));
    expect(reader.interest()).toBe(WAITS);

    const before = reader.waiterCalls;
    const [first] = await claimSome(ctx, 1); // mint order: the first job enqueued
    expect(first.id).toBe(ids[0]);
    await completeJobs(ctx, [{ claim: first, result: JSON.stringify('r0') }], 0);
    await expect(waits[0]).resolves.toBe('r0');
    expect(reader.waiterCalls - before).toBe(1);

    const index = new Map(ids.map((id, i) => [id, i]));
    for (let done = 1; done < WAITS;) {
      const claims = await claimSome(ctx, CHUNK);
      const completions = claims.map((claim) => ({
        claim,
        result: JSON.stringify(`r${index.get(claim.id)}`),
      }));
      await completeJobs(ctx, completions, 0);
      done += claims.length;
    }
    const results = await Promise.all(waits);
    expect(results).toEqual(ids.map((_, i) => `r${i}`));
    // Every wait was handed exactly one event: its own job's 'completed'.
    expect(reader.waiterCalls - before).toBe(WAITS);
    expect(reader.interest()).toBe(0);
  });
});
