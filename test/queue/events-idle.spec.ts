import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { completeJob, QueueService, RedisConnections } from '@app/echomq/internal';
import { QueueEventReaders } from '@app/echomq/events/event-readers';
import { claimSome } from '../support/claims';
import { bootApp } from '../support/nest';
import { connect, redisUrl, uniqueQueue } from '../support/redis';

const IDLE_MS = 50;

/**
 * Polls until `check` holds. Only for state that lives in Redis and has no event to
 * await here (a closed socket leaves CLIENT LIST a moment after the client let it go).
 */
async function eventually(check: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('event readers nobody listens to are closed', () => {
  const name = `events-idle-${randomBytes(4).toString('hex')}`;
  let app: INestApplication;
  let queues: QueueService;
  let readers: QueueEventReaders;
  let redis: Redis;

  /** Connections this app holds open on the suite's Redis (its command client and its readers). */
  async function connectionsOfApp(): Promise<number> {
    const list = (await redis.client('LIST')) as string;
    return list.split('\n').filter((line) => line.includes(` name=${name} `)).length;
  }

  beforeAll(async () => {
    app = await bootApp([], { connection: { url: redisUrl(), connectionName: name } });
    queues = app.get(QueueService);
    // The registry QueueService delegates to, with a short idle period instead of 30 s.
    readers = new QueueEventReaders(app.get(RedisConnections), IDLE_MS);
    redis = connect();
  });
  afterAll(async () => {
    await readers.stopAll();
    await app.close();
    await redis.quit();
  });

  it('an idle reader stops and closes its connection; a later waitFor opens a new one and works', async () => {
    const queue = uniqueQueue('idle');
    const base = await connectionsOfApp();

    const unsubscribe = await readers.subscribe(queue, () => undefined);
    const first = await readers.reader(queue);
    expect(readers.readerCount()).toBe(1);
    await eventually(async () => (await connectionsOfApp()) === base + 1);

    unsubscribe();
    await first.closed;
    expect(first.stopped).toBe(true);
    expect(readers.readerCount()).toBe(0);
    await eventually(async () => (await connectionsOfApp()) === base);

    const id = await queues.enqueue(queue, 'x');
    const wait = readers.waitFor(queue, id, 10_000, () => queues.getJob(queue, id));
    const second = await readers.reader(queue);
    expect(second).not.toBe(first);
    expect(readers.readerCount()).toBe(1);
    const ctx = queues.context(queue);
    const [claim] = await claimSome(ctx);
    await completeJob(ctx, claim, JSON.stringify('ok'), 0);
    await expect(wait).resolves.toBe('ok');

    // The wait was its only interest: it closes again.
    await second.closed;
    expect(readers.readerCount()).toBe(0);
  });
});
