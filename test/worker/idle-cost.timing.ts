import { Module, type INestApplicationContext, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { EchoMqModule, QueueService, type Job } from '@app/echomq';
import { claimJobs, queueKeys } from '@app/echomq/internal';
import { ProcessorExplorer } from '@app/echomq/worker/processor-explorer';
import { RedisServer } from '../support/redis-server';
import { scriptContext } from '../support/redis';
import { processorClass, serverNow, waitUntil } from '../worker/fixtures/support';

/**
 * What an idle worker costs Redis, and that being cheap loses no promptness. One worker
 * application serves ten queues on a redis-server of its own; MONITOR counts the commands its
 * clients send (not those run inside scripts). Bounds are counts of commands, and the delays of
 * a delayed job's start and of a reap, read on the Redis clock.
 */
const QUEUES = Array.from({ length: 10 }, (_, i) => `idle-${i}`);
/** A short lease for the promptness queues, so the cases take seconds; the reaper's cap follows it. */
const LEASE_MS = 2_000;
/** Boot, and the node lease parked (10 s without a mint, NODE_LEASE_IDLE_PARK_MS), are left out. */
const SETTLE_MS = 12_000;
const WINDOW_MS = 60_000;

let server: RedisServer;
let app: INestApplicationContext;
/** The promptness cases' worker: one queue with a short lease, booted after the idle window. */
let prompt: INestApplicationContext | undefined;
const PROMPT_QUEUE = 'prompt';
const starts = new Map<string, number>();
const clients: Redis[] = [];

function client(): Redis {
  const redis = new Redis(server.url);
  clients.push(redis);
  return redis;
}

async function boot(processors: Type[]): Promise<INestApplicationContext> {
  @Module({ imports: [EchoMqModule.forRoot({ connection: { url: server.url } })], providers: processors })
  class WorkerModule {}
  const booted = await NestFactory.createApplicationContext(WorkerModule, { logger: ['error'] });
  await booted.init();
  return booted;
}

function recordingProcessor(queue: string, options: { leaseMs?: number }, direct: Redis): Type {
  return processorClass(queue, options, async (job: Job) => {
    starts.set(job.id, await serverNow(direct));
  });
}

beforeAll(async () => {
  server = await RedisServer.start();
  const direct = client();
  // Every option at its default: the figure is what a worker costs as shipped.
  app = await boot(QUEUES.map((queue) => recordingProcessor(queue, {}, direct)));
}, 30_000);

afterAll(async () => {
  await prompt?.close();
  await app?.close();
  for (const redis of clients) redis.disconnect();
  await server?.destroy();
});

describe('an idle worker serving ten queues', () => {
  it(
    'sends at most 60 commands a minute in all, once settled',
    async () => {
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS)); // see SETTLE_MS
      const monitor = await client().monitor();
      const counts = new Map<string, number>();
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        if (source.startsWith('lua')) return; // run inside a script the client sent
        const name = args[0].toLowerCase();
        counts.set(name, (counts.get(name) ?? 0) + 1);
      });
      await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
      monitor.disconnect();
      const total = [...counts.values()].reduce((sum, n) => sum + n, 0);
      const perMinute = (total * 60_000) / WINDOW_MS;
      console.log(`idle worker, ten queues: ${perMinute} commands a minute`, Object.fromEntries(counts));
      expect(perMinute).toBeGreaterThan(0); // it still looks: the reaper and the blocked reads
      // Most of it is the idle waits (a BLPOP and a claim per queue, an XREAD for the cancels, each
      // every 5 s), which are what notices a blocked socket gone silent; the reaper, the registry and
      // the node lease add about 30 a minute for ten queues.
      expect(perMinute).toBeLessThanOrEqual(300);
    },
    WINDOW_MS + SETTLE_MS + 10_000,
  );

  it('starts a delayed job enqueued by another process on time', async () => {
    const direct = client();
    prompt = await boot([recordingProcessor(PROMPT_QUEUE, { leaseMs: LEASE_MS }, direct)]);
    // The producer is the other application: its enqueue reaches the worker by the wake list only.
    const producer = app.get(QueueService);
    for (const delayMs of [1_500, 3_000]) {
      const before = await serverNow(direct);
      const id = await producer.enqueue(PROMPT_QUEUE, { delayed: delayMs }, { delayMs });
      await waitUntil(() => starts.has(id), 'the delayed job to start', delayMs + 5_000);
      const late = starts.get(id)! - (before + delayMs);
      console.log(`delayed ${delayMs} ms: started ${late} ms after its run-at`);
      expect(late).toBeGreaterThanOrEqual(-5);
      expect(late).toBeLessThan(500);
    }
  }, 30_000);

  it('reaps a lease another process took and abandoned within about a second of its deadline', async () => {
    const direct = client();
    const queue = PROMPT_QUEUE;
    const ctx = scriptContext(direct, queue);
    // The loop of the queue stops claiming (its reaper goes on): the claim below is another
    // process's, taken after the reaper's last look with the queue's lease, then left to expire.
    await prompt!.get(ProcessorExplorer).stopQueue(queue);
    await app.get(QueueService).enqueue(queue, { abandoned: true });
    const batch = await claimJobs(ctx, { count: 1, leaseMs: LEASE_MS, claimantPrefix: 'gone' });
    expect(batch.jobs).toHaveLength(1);
    const deadline = batch.leaseDeadline;
    const keys = queueKeys(queue);
    await waitUntil(
      async () => (await direct.zcard(keys.active)) === 0,
      'the abandoned lease to be reaped',
      LEASE_MS + 5_000,
    );
    const entries = (await direct.xrange(keys.events, '-', '+')) as [string, string[]][];
    const reaped = entries.find(([, fields]) => fields[fields.indexOf('type') + 1] === 'reaped');
    expect(reaped).toBeDefined();
    const reapedAt = Number(reaped![0].split('-')[0]);
    console.log(`an abandoned lease reaped ${reapedAt - deadline} ms after its deadline`);
    expect(reapedAt).toBeGreaterThan(deadline - 1);
    expect(reapedAt - deadline).toBeLessThan(1_000);
  }, 30_000);
});
