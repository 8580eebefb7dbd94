import { once } from 'node:events';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import { DataFormatError, EchoMqModule, Processor, QueueService, type Job } from '@app/echomq';
import {
  DATA_FORMAT,
  QUEUE_REGISTRY_KEY,
  RedisConnections,
  claimJobs,
  enqueueJobs,
  queueKeys,
} from '@app/echomq/internal';
import { backdate, jobRecord } from '../support/assertions';
import { CapturedLog } from '../support/captured-log';
import { bootApp } from '../support/nest';
import { connect, idMinter, redisUrl, scriptContext, uniqueQueue } from '../support/redis';

/** Written by "a newer release": a format this code does not know. */
const FUTURE = uniqueQueue('future');
const LEGACY = uniqueQueue('legacy');
const legacyDone: string[] = [];

@Processor(FUTURE)
class FutureProcessor {
  process() {
    throw new Error('a job of a queue in an unknown format must never be handed to a handler');
  }
}

@Processor(LEGACY)
class LegacyProcessor {
  process(job: Job) {
    legacyDone.push(job.id);
    return 'done';
  }
}

/** Every key of a queue with its value's dump, and the registry's view of it: "nothing written" is this unchanged. */
async function footprint(redis: Redis, queue: string): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `*{${queue}}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) found[key] = String((await redis.dumpBuffer(key))?.toString('hex'));
  } while (cursor !== '0');
  found.registered = String(await redis.sismember(QUEUE_REGISTRY_KEY, queue));
  return found;
}

function refusal(error: unknown, queue: string, stored: string): void {
  expect(error).toBeInstanceOf(DataFormatError);
  const refused = error as DataFormatError;
  expect(refused.code).toBe('DATA_FORMAT_UNSUPPORTED');
  expect(refused.queue).toBe(queue);
  expect(refused.stored).toBe(stored);
  expect(refused.known).toBe(DATA_FORMAT);
}

describe('the data format of a queue', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('is format 1 in this release', () => {
    expect(DATA_FORMAT).toBe(1);
  });

  describe('recorded on first use', () => {
    let app: INestApplication;
    let queues: QueueService;

    beforeAll(async () => {
      app = await bootApp([LegacyProcessor], { nodeId: 41 });
      queues = app.get(QueueService);
    });
    afterAll(async () => {
      await app.close();
    });

    it('by the first enqueue to a new queue', async () => {
      const queue = uniqueQueue('fresh');
      expect(await redis.exists(queueKeys(queue).format)).toBe(0);
      await queues.enqueue(queue, { n: 1 });
      expect(await redis.get(queueKeys(queue).format)).toBe(String(DATA_FORMAT));
    });

    it('by a worker at boot, which then serves the queue', async () => {
      expect(await redis.get(queueKeys(LEGACY).format)).toBe('1');
      const served = await queues.enqueue(LEGACY, { n: 2 });
      await expect(queues.waitFor(LEGACY, served, 10_000)).resolves.toBe('done');
      expect(legacyDone).toEqual([served]);
    });

    it('as format 1 on a queue written before formats were recorded', async () => {
      const older = uniqueQueue('older');
      const ctx = scriptContext(redis, older);
      await enqueueJobs(ctx, [jobRecord(idMinter(42)())], 60_000);
      expect(await redis.exists(ctx.keys.format)).toBe(0);
      await queues.register(older);
      expect(await redis.get(ctx.keys.format)).toBe('1');
      expect(await queues.counts(older)).toMatchObject({ pending: 1 });
    });

    it('and never overwritten by a later process', async () => {
      const queue = uniqueQueue('kept');
      await queues.enqueue(queue, 1);
      const other = await bootApp([], { nodeId: 43 });
      try {
        await other.get(QueueService).enqueue(queue, 2);
      } finally {
        await other.close();
      }
      expect(await redis.get(queueKeys(queue).format)).toBe('1');
      expect(await queues.counts(queue)).toMatchObject({ pending: 2 });
    });
  });

  describe('newer than this release knows', () => {
    beforeAll(async () => {
      await redis.set(queueKeys(FUTURE).format, String(DATA_FORMAT + 1));
    });

    it('fails enqueue with DataFormatError, having written nothing', async () => {
      const app = await bootApp([], { nodeId: 44 });
      try {
        const queues = app.get(QueueService);
        const before = await footprint(redis, FUTURE);
        for (const attempt of [
          () => queues.enqueue(FUTURE, { n: 1 }),
          () => queues.enqueueMany(FUTURE, [{ data: 1 }, { data: 2 }]),
        ]) {
          let caught: unknown;
          await attempt().catch((error: unknown) => (caught = error));
          refusal(caught, FUTURE, String(DATA_FORMAT + 1));
        }
        expect(await footprint(redis, FUTURE)).toEqual(before);
      } finally {
        await app.close();
      }
    });

    it('says which queue, which formats, and what to do', () => {
      expect(new DataFormatError('emails', '2', 1).message).toBe(
        "Queue 'emails' is stored in data format 2, but this EchoMQ knows formats up to 1: " +
          'upgrade this process to a release that knows format 2 (docs/upgrading.md); nothing was written',
      );
    });

    it('stops a worker that would serve the queue at boot, and closes its connections', async () => {
      await enqueueJobs(scriptContext(redis, FUTURE), [jobRecord(idMinter(45)())], 60_000);
      const before = await footprint(redis, FUTURE);
      const moduleRef = await Test.createTestingModule({
        imports: [EchoMqModule.forRoot({ connection: { url: redisUrl() }, reaper: { intervalMs: 100 } })],
        providers: [FutureProcessor],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      let caught: unknown;
      await app.init().catch((error: unknown) => (caught = error));
      refusal(caught, FUTURE, String(DATA_FORMAT + 1));
      // QUIT was sent before init rejected; the socket's close may come a moment later.
      const client = app.get(RedisConnections).client;
      if (client.status !== 'end') await once(client, 'end');
      expect(client.status).toBe('end');
      // The pending job was neither claimed nor touched, and the queue was not registered.
      expect(await footprint(redis, FUTURE)).toEqual(before);
    });
  });

  it('refuses a format key that holds no format number (written by hand), quoting it', async () => {
    const queue = uniqueQueue('garbled');
    await redis.set(queueKeys(queue).format, 'v2');
    const app = await bootApp([], { nodeId: 46 });
    try {
      let caught: unknown;
      await app
        .get(QueueService)
        .enqueue(queue, 1)
        .catch((error: unknown) => (caught = error));
      refusal(caught, queue, 'v2');
      expect((caught as Error).message).toContain('stored in data format "v2"');
      expect(await redis.exists(queueKeys(queue).pending)).toBe(0);
    } finally {
      await app.close();
    }
  });
  it('keeps the reaper off a registered queue in a newer format, while it reaps the others', async () => {
    const future = uniqueQueue('reap-future');
    const current = uniqueQueue('reap-current');
    const expiredClaim = async (queue: string): Promise<string> => {
      const ctx = scriptContext(redis, queue);
      const [id] = await enqueueJobs(ctx, [jobRecord(idMinter(47)())], 60_000).then((r) =>
        r.map((o) => o.id),
      );
      const [job] = (await claimJobs(ctx, { count: 1, leaseMs: 1_000, claimantPrefix: 'gone' })).jobs;
      await backdate(redis, queueKeys(queue).active, job.id);
      await redis.sadd(QUEUE_REGISTRY_KEY, queue);
      return id;
    };
    const futureId = await expiredClaim(future);
    const currentId = await expiredClaim(current);
    await redis.set(queueKeys(future).format, String(DATA_FORMAT + 1));
    await redis.set(queueKeys(current).format, String(DATA_FORMAT));

    @Processor(uniqueQueue('reap-other'))
    class Other {
      process(): void {}
    }
    const log = new CapturedLog();
    const moduleRef = await Test.createTestingModule({
      imports: [EchoMqModule.forRoot({ connection: { url: redisUrl() }, reaper: { intervalMs: 100 } })],
      providers: [Other],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: log });
    await app.init();
    try {
      const queues = app.get(QueueService);
      const reaped = new Promise<void>((resolve) => {
        void queues.subscribe(current, (event) => {
          if (event.type === 'reaped' && event.ids.includes(currentId)) resolve();
        });
      });
      // The job of the current queue may already be back in pending when the listener starts.
      const [refusedLine] = await log.waitFor(
        (line) => line.level === 'warn' && line.message.includes(`Reaper leaves queue ${future} alone`),
      );
      expect(refusedLine.message).toContain(`data format ${DATA_FORMAT + 1}`);
      if ((await queues.getJob(current, currentId))?.state !== 'pending') await reaped;
      expect((await queues.getJob(current, currentId))?.state).toBe('pending');
      expect(await redis.zscore(queueKeys(future).active, futureId)).not.toBeNull();
      expect(await redis.zscore(queueKeys(future).pending, futureId)).toBeNull();
    } finally {
      await app.close();
    }
  });
});
