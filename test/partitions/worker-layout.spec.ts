import type { INestApplication } from '@nestjs/common';
import { ProcessorExplorer, QueueService, partitionTagOf, type Job, type JobId } from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { deferred, processorClass, waitUntil } from '../worker/fixtures/support';
import { useApps } from '../support/app-suite';

/** Which physical queues a worker serves as a queue's partition layout changes (docs/partitions.md). */

const apps = useApps();

async function boot(providers: Parameters<typeof bootApp>[0], options: Parameters<typeof bootApp>[1] = {}) {
  const app = await bootApp(providers, { shutdownGraceMs: 200, ...options });
  apps.push(app);
  return app;
}

/** A handler that records each job it ran, and resolves `all` once `count` ran. */
function recorder(count: number) {
  const ran: { id: JobId; queue: string; partition: number | undefined }[] = [];
  const all = deferred();
  const handler = (job: Job) => {
    ran.push({ id: job.id, queue: job.queue, partition: job.partition });
    if (ran.length === count) all.resolve();
    return true;
  };
  return { ran, all, handler };
}

const servedBy = (app: INestApplication) =>
  app
    .get(ProcessorExplorer)
    .loopReports()
    .map((report) => report.queue);

describe('a worker of a partitioned queue whose layout changed', () => {
  it('drains partition #2 after the count went from 3 to 2, while new jobs go to #0 and #1', async () => {
    const queue = uniqueQueue('wl-drop');
    const producer = await boot([], { queues: { [queue]: { partitions: 3 } } });
    const before: JobId[] = [];
    for (let n = 0; n < 9; n++) before.push(await producer.get(QueueService).enqueue(queue, { n }));
    expect(new Set(before.map(partitionTagOf))).toEqual(new Set([0, 1, 2]));

    const { ran, all, handler } = recorder(13);
    const worker = await boot([processorClass(queue, { partitions: 2 }, handler)]);
    expect(servedBy(worker)).toEqual([`${queue}#0`, `${queue}#1`, `${queue}#2`]);
    const after: JobId[] = [];
    for (let n = 0; n < 4; n++) after.push(await worker.get(QueueService).enqueue(queue, { n }));
    expect(new Set(after.map(partitionTagOf))).toEqual(new Set([0, 1]));
    await all.promise;

    expect(new Set(ran.map((run) => run.id))).toEqual(new Set([...before, ...after]));
    expect(ran.filter((run) => run.partition === 2)).toHaveLength(3);
    expect(new Set(ran.map((run) => run.queue))).toEqual(new Set([queue]));
    expect(await worker.get(QueueService).counts(queue)).toMatchObject({ pending: 0, active: 0 });
  });

  it('drains the queue itself after it was partitioned, its old jobs telling no partition', async () => {
    const queue = uniqueQueue('wl-late');
    const unpartitioned = await boot([]);
    const old: JobId[] = [];
    for (let n = 0; n < 5; n++) old.push(await unpartitioned.get(QueueService).enqueue(queue, { n }));

    const { ran, all, handler } = recorder(8);
    const worker = await boot([processorClass(queue, { partitions: 3 }, handler)]);
    expect(servedBy(worker)).toEqual([queue, `${queue}#0`, `${queue}#1`, `${queue}#2`]);
    const fresh: JobId[] = [];
    for (let n = 0; n < 3; n++) fresh.push(await worker.get(QueueService).enqueue(queue, { n }));
    await all.promise;

    const partitionOf = new Map(ran.map((run) => [run.id, run.partition]));
    for (const id of old) expect(partitionOf.get(id)).toBeUndefined();
    expect(new Set(fresh.map((id) => partitionOf.get(id)))).toEqual(new Set([0, 1, 2]));
    expect(new Set(ran.map((run) => run.queue))).toEqual(new Set([queue]));
    expect((await worker.get(QueueService).counts(queue)).pending).toBe(0);
  });

  it('serves the partitions another process recorded, though it declares none, and not the empty queue itself', async () => {
    const queue = uniqueQueue('wl-rec');
    const producer = await boot([], { queues: { [queue]: { partitions: 3 } } });
    const ids: JobId[] = [];
    for (let n = 0; n < 6; n++) ids.push(await producer.get(QueueService).enqueue(queue, { n }));

    const { ran, all, handler } = recorder(6);
    const worker = await boot([processorClass(queue, {}, handler)]);
    expect(servedBy(worker)).toEqual([`${queue}#0`, `${queue}#1`, `${queue}#2`]);
    expect(worker.get(ProcessorExplorer).requireLoop(queue).queue).toBe(queue);
    await all.promise;
    expect(new Set(ran.map((run) => run.id))).toEqual(new Set(ids));
    expect(new Set(ran.map((run) => run.partition))).toEqual(new Set([0, 1, 2]));
  });

  it('serves the queue itself again when the count went back to 1, since new jobs go there', async () => {
    const queue = uniqueQueue('wl-one');
    const three = await boot([], { queues: { [queue]: { partitions: 3 } } });
    await three.get(QueueService).enqueue(queue, { era: 3 });
    const { ran, all, handler } = recorder(2);
    const worker = await boot([processorClass(queue, { partitions: 1 }, handler)]);
    expect(servedBy(worker)).toEqual([queue, `${queue}#0`, `${queue}#1`, `${queue}#2`]);
    const id = await worker.get(QueueService).enqueue(queue, { era: 1 });
    await all.promise;
    // The new job was in the queue itself; the one from when it had 3 partitions in one of them.
    expect(ran.find((run) => run.id === id)?.partition).toBeUndefined();
    expect(ran.find((run) => run.id !== id)?.partition).toEqual(expect.any(Number));
  });

  it('starts serving the partitions a running unpartitioned queue gains, without a restart', async () => {
    const queue = uniqueQueue('wl-grow');
    const { ran, all, handler } = recorder(4);
    const worker = await boot([processorClass(queue, {}, handler)]);
    expect(servedBy(worker)).toEqual([queue]);
    const producer = await boot([], { queues: { [queue]: { partitions: 2 } } });
    const ids: JobId[] = [];
    for (let n = 0; n < 4; n++) ids.push(await producer.get(QueueService).enqueue(queue, { n }));
    expect(new Set(ids.map(partitionTagOf))).toEqual(new Set([0, 1]));
    // The worker reads the registry again within seconds (PARTITIONS_REFRESH_MS) and follows it.
    await all.promise;
    expect(servedBy(worker)).toEqual([queue, `${queue}#0`, `${queue}#1`]);
    expect(new Set(ran.map((run) => run.partition))).toEqual(new Set([0, 1]));
    const loop = worker.get(ProcessorExplorer).requireLoop(queue);
    await waitUntil(() => !loop.busy, 'the worker to settle its jobs');
    expect(loop.inFlight).toBe(0);
  }, 30_000);
});
