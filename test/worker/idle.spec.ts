import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import { QueueService, queueKeys, type Job } from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { RedisServer } from '../support/redis-server';
import { connect, uniqueQueue } from '../support/redis';
import { closeAll, deferred, processorClass, serverNow, waitUntil } from './fixtures/support';

const apps: INestApplication[] = [];
const clients: Redis[] = [];
let server: RedisServer | undefined;

afterEach(async () => {
  await closeAll(apps.splice(0));
  for (const client of clients.splice(0)) client.disconnect();
  await server?.destroy();
  server = undefined;
});

async function blockedClients(redis: Redis): Promise<number> {
  const info = await redis.info('clients');
  return Number(/blocked_clients:(\d+)/.exec(info)?.[1] ?? -1);
}

describe('an idle worker', () => {
  it('starts a job enqueued into an idle queue on the wake signal, not on a timer', async () => {
    // A Redis of its own, so the blocked-clients count is this worker's alone.
    server = await RedisServer.start();
    const redis = new Redis(server.url);
    clients.push(redis);
    const queue = uniqueQueue('idle');
    const started = deferred<Job>();
    const Proc = processorClass(queue, {}, (job) => started.resolve(job));
    const app = await bootApp([Proc], { connection: { url: server.url }, shutdownGraceMs: 300 });
    apps.push(app);

    // The loop found nothing to claim and is now blocked in BLPOP on the wake list (the other
    // blocked client is the process's cancels reader, XREAD BLOCK).
    await waitUntil(async () => (await blockedClients(redis)) === 2, 'the idle loop to block on Redis');

    const id = await app.get(QueueService).enqueue(queue, { hello: 'world' });
    const job = await started.promise;
    expect(job.id).toBe(id);
    // The enqueue's wake token was taken by the blocked loop: had the job been picked up by
    // a timed re-claim instead, the token would still be waiting in the list.
    expect(await redis.llen(queueKeys(queue).wake)).toBe(0);
  });

  it('runs a delayed job from schedule once its run-at has come (server clock)', async () => {
    const redis = connect();
    clients.push(redis);
    const queue = uniqueQueue('delayed');
    const started = deferred<number>();
    const Proc = processorClass(queue, { retainCompletedMs: 60_000 }, async () => {
      started.resolve(await serverNow(redis));
      return 'ran';
    });
    const app = await bootApp([Proc], { shutdownGraceMs: 300 });
    apps.push(app);
    const queues = app.get(QueueService);

    const before = await serverNow(redis);
    const id = await queues.enqueue(queue, {}, { delayMs: 300 });
    const view = await queues.getJob(queue, id);
    expect(view?.state).toBe('schedule');
    const runAt = view?.runAt?.getTime() ?? Number.NaN;
    expect(runAt).toBeGreaterThanOrEqual(before + 300);

    const startedAt = await started.promise;
    expect(startedAt).toBeGreaterThanOrEqual(runAt);
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toBe('ran');
  });
});
