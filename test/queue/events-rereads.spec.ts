import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import {
  JobFailedError,
  QueueService,
  WaitTimeoutError,
  type JobView,
  type QueueKeys,
} from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { connect, redisUrl, uniqueQueue } from '../support/redis';

/** Waits that could only end by reading the job again get a timeout far past the test's own. */
const NEVER_MS = 600_000;
const TEST_MS = 20_000;

/**
 * Watches QueueService.getJob, the read waitFor uses, so a test can wait until a wait
 * has read its job once before it changes the job behind the reader's back.
 */
function watchReads(queues: QueueService) {
  const original = queues.getJob.bind(queues);
  const done: (JobView | undefined)[] = [];
  const waiting: { count: number; resolve: () => void }[] = [];
  jest.spyOn(queues, 'getJob').mockImplementation(async (queue: string, id: string) => {
    const view = await original(queue, id);
    done.push(view);
    for (const w of waiting.filter((w) => done.length >= w.count)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve();
    }
    return view;
  });
  return {
    done,
    /** Resolves once `count` reads have answered. */
    reached(count: number): Promise<void> {
      if (done.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiting.push({ count, resolve }));
    },
  };
}

/**
 * A pending job completes with its row kept (result and finish time), as complete does,
 * but its 'completed' entry is trimmed in the same MULTI, so no reader can ever read it:
 * what a reader that fell behind the stream's cap loses. With `event: false` no entry
 * is written at all (nothing on the stream even hints that something was missed).
 */
async function completeUnseen(
  redis: Redis,
  keys: QueueKeys,
  id: string,
  result: unknown,
  { event = true } = {},
): Promise<void> {
  const multi = redis
    .multi()
    .zrem(keys.pending, id)
    .hset(keys.job(id), 'r', JSON.stringify(result), 'f', Date.now())
    .pexpire(keys.job(id), 60_000);
  if (event) {
    multi
      .xadd(keys.events, '*', 'type', 'completed', 'ids', id, 'results', JSON.stringify([result]))
      .xtrim(keys.events, 'MAXLEN', 0);
  }
  await multi.exec();
}

describe('waitFor reads the job again when events may have been missed', () => {
  let app: INestApplication;
  let queues: QueueService;
  let redis: Redis;

  beforeAll(async () => {
    app = await bootApp([]);
    queues = app.get(QueueService);
    redis = connect();
  });
  afterAll(async () => {
    await app.close();
    await redis.quit();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it(
    'a job whose completed event was trimmed before the reader read it resolves (gap detected)',
    async () => {
      const queue = uniqueQueue('gap');
      const keys = queues.context(queue).keys;
      const reads = watchReads(queues);
      const id = await queues.enqueue(queue, 'x');
      const wait = queues.waitFor(queue, id, NEVER_MS);
      await reads.reached(1);
      expect(reads.done[0]?.state).toBe('pending');
      await completeUnseen(redis, keys, id, { big: 'result' });
      await queues.enqueue(queue, 'later traffic'); // the entry the reader reads next, past the gap
      await expect(wait).resolves.toEqual({ big: 'result' });
    },
    TEST_MS,
  );

  it(
    'a job that finished unseen while the reader reconnected resolves (reconnect)',
    async () => {
      // An app of its own, so its one blocked XREAD connection is this queue's reader.
      const alone = `events-reconnect-${randomBytes(4).toString('hex')}`;
      const own = await bootApp([], { connection: { url: redisUrl(), connectionName: alone } });
      try {
        const service = own.get(QueueService);
        const queue = uniqueQueue('reconnect');
        const reads = watchReads(service);
        const id = await service.enqueue(queue, 'x');
        const wait = service.waitFor(queue, id, NEVER_MS);
        await reads.reached(1);
        // No entry at all: only the reconnect can make the wait look again.
        await completeUnseen(redis, service.context(queue).keys, id, 'after reconnect', { event: false });
        await killReaderConnection(redis, alone);
        await expect(wait).resolves.toBe('after reconnect');
      } finally {
        await own.close();
      }
    },
    TEST_MS,
  );

  it('before it reports a timeout, a wait reads the job once more', async () => {
    const queue = uniqueQueue('timeout');
    const keys = queues.context(queue).keys;
    const reads = watchReads(queues);
    const [finished, live] = await queues.enqueueMany(queue, [{ data: 1 }, { data: 2 }]);
    const finishedWait = queues.waitFor(queue, finished, 1_000);
    const liveWait = queues.waitFor(queue, live, 1_000);
    await reads.reached(2);
    await completeUnseen(redis, keys, finished, 'finished quietly', { event: false });
    await expect(finishedWait).resolves.toBe('finished quietly');
    await expect(liveWait).rejects.toBeInstanceOf(WaitTimeoutError);
  });

  it('a result left out of its completed event (omitted) is read from the row', async () => {
    const queue = uniqueQueue('omitted');
    const keys = queues.context(queue).keys;
    const reads = watchReads(queues);
    const [small, large] = await queues.enqueueMany(queue, [{ data: 1 }, { data: 2 }]);
    const smallWait = queues.waitFor(queue, small, 10_000);
    const largeWait = queues.waitFor(queue, large, 10_000);
    await reads.reached(2);
    const big = { blob: 'x'.repeat(2_000) };
    // One batch completion, as the complete script writes it when a result is too large for the event.
    await redis
      .multi()
      .zrem(keys.pending, small, large)
      .del(keys.job(small))
      .hset(keys.job(large), 'r', JSON.stringify(big), 'f', Date.now())
      .pexpire(keys.job(large), 60_000)
      .xadd(
        keys.events,
        '*',
        'type',
        'completed',
        'ids',
        `${small},${large}`,
        'results',
        '["s",null]',
        'omitted',
        large,
      )
      .exec();
    await expect(smallWait).resolves.toBe('s');
    await expect(largeWait).resolves.toEqual(big);
  });

  it('a dead job whose event carries a cut error rejects with the full error from its row', async () => {
    const queue = uniqueQueue('dead-error');
    const keys = queues.context(queue).keys;
    const reads = watchReads(queues);
    const id = await queues.enqueue(queue, 'x', { maxAttempts: 1 });
    const wait = queues.waitFor(queue, id, 10_000);
    await reads.reached(1);
    const full = `boom: ${'detail '.repeat(200)}`;
    await redis
      .multi()
      .zrem(keys.pending, id)
      .zadd(keys.dead, 0, id)
      .hset(keys.job(id), 'e', full)
      .xadd(keys.events, '*', 'type', 'dead', 'ids', id, 'attempt', '1', 'error', full.slice(0, 1_024))
      .exec();
    const failure = await wait.catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(JobFailedError);
    expect((failure as JobFailedError).lastError).toBe(full);
  });
});

/** Kills the app's one blocked XREAD connection (its event reader), as a network fault would. */
async function killReaderConnection(redis: Redis, name: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    const list = (await redis.client('LIST')) as string;
    const line = list
      .split('\n')
      .find((l) => l.includes(` name=${name} `) && l.includes(' cmd=xread ') && / flags=\S*b/.test(l));
    const id = line && /(?:^|\s)id=(\d+)/.exec(line)?.[1];
    if (id) {
      await redis.client('KILL', 'ID', id);
      return;
    }
    // The reader re-issues its XREAD every few seconds; it is between two reads right now.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('no blocked reader connection found');
}
