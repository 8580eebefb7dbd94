import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  EchoMqModule,
  InvalidOptionError,
  QueueService,
  readLimits,
  type EchoMqModuleOptions,
} from '@app/echomq/internal';
import { CapturedLog } from '../support/captured-log';
import { bootApp } from '../support/nest';
import { redisUrl, uniqueQueue } from '../support/redis';

/** An application whose log lines are kept, so the test reads the warnings an operator would see. */
async function bootLogged(
  log: CapturedLog,
  options: Partial<EchoMqModuleOptions>,
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [EchoMqModule.forRoot({ connection: { url: redisUrl() }, ...options })],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: log });
  await app.init();
  return app;
}

/** Every physical queue's stored globalConcurrency, in the layout's order. */
async function sharesOf(queues: QueueService, queue: string): Promise<(number | null)[]> {
  const { physical } = await queues.partitionLayout(queue);
  return Promise.all(
    physical.map(async (name) => (await readLimits(queues.context(name))).globalConcurrency),
  );
}

describe('configured limits over a partition count they cannot be split over', () => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  it("never stop a process whose limit is below another process's count: each share is 1, and it says so once", async () => {
    const queue = uniqueQueue('clamp');
    const declaring = await bootApp([], { queues: { [queue]: { partitions: 4 } } });
    apps.push(declaring);
    await declaring.get(QueueService).enqueue(queue, 'recorded');

    const log = new CapturedLog();
    const limited = await bootLogged(log, {
      queues: { [queue]: { globalConcurrency: 2, rateLimit: { max: 3, windowMs: 1_000 } } },
    });
    apps.push(limited);
    const queues = limited.get(QueueService);
    // Its boot registered the queue with the count it read (4): the enqueues work.
    for (let n = 0; n < 8; n++) await queues.enqueue(queue, { n });
    expect((await queues.counts(queue)).pending).toBe(9);
    // A partition it learns of is registered too (what a worker's loop for it does first).
    await expect(queues.register(`${queue}#3`)).resolves.toBeUndefined();

    // [q, q#0 .. q#3]: four partitions, each enforcing at least 1 (the queue itself gets no share).
    expect(await sharesOf(queues, queue)).toEqual([null, 1, 1, 1, 1]);
    expect((await queues.getLimits(queue)).globalConcurrency).toBe(4);
    expect((await queues.getLimits(queue)).rateLimit).toEqual({ max: 4, windowMs: 1_000 });
    const warned = log.matching(
      (line) => line.level === 'warn' && line.message.startsWith(`Queue ${queue}:`),
    );
    expect(warned.map((line) => line.message)).toEqual([
      expect.stringMatching(/globalConcurrency 2 cannot be split over its 4 partitions.*total is 4, above/),
      expect.stringMatching(
        /rateLimit 3 per 1000 ms cannot be split over its 4 partitions.*total is 4 per 1000 ms/,
      ),
    ]);
  });

  it('refuse at boot options that give a count and a limit below it: one layer, or defaults and the queue', async () => {
    const queue = uniqueQueue('contradict');
    const refusal = async (options: Partial<EchoMqModuleOptions>): Promise<unknown> =>
      bootApp([], options).then(
        (app) => {
          apps.push(app);
          return undefined;
        },
        (error: unknown) => error,
      );
    const own = await refusal({ queues: { [queue]: { partitions: 4, globalConcurrency: 2 } } });
    expect(own).toBeInstanceOf(InvalidOptionError);
    expect(own).toMatchObject({ option: `queues.${queue}.globalConcurrency` });
    const rate = await refusal({ defaults: { partitions: 3, rateLimit: { max: 2, windowMs: 1_000 } } });
    expect(rate).toMatchObject({ option: 'defaults.rateLimit.max' });
    const crossed = await refusal({
      defaults: { globalConcurrency: 3 },
      queues: { [queue]: { partitions: 4 } },
    });
    expect(crossed).toBeInstanceOf(InvalidOptionError);
    expect(crossed).toMatchObject({ option: 'defaults.globalConcurrency' });
    expect((crossed as Error).message).toContain(`queues.${queue}.partitions`);
    const fromDefaults = await refusal({
      defaults: { partitions: 5 },
      queues: { [queue]: { globalConcurrency: 4 } },
    });
    expect(fromDefaults).toMatchObject({ option: `queues.${queue}.globalConcurrency` });

    // A limit at least the count boots; the queue's own limit wins over a small default.
    expect(await refusal({ queues: { [queue]: { partitions: 4, globalConcurrency: 4 } } })).toBeUndefined();
    expect(
      await refusal({
        defaults: { globalConcurrency: 1 },
        queues: { [queue]: { partitions: 2, globalConcurrency: 8 } },
      }),
    ).toBeUndefined();
  });
});

describe('limit shares while the queue itself and draining partitions hold jobs', () => {
  const apps: INestApplication[] = [];
  afterAll(async () => {
    for (const app of apps.splice(0)) await app.close();
  });

  it('add up to the limit over the partitions, and getLimits reports what they enforce together', async () => {
    const queue = uniqueQueue('shares');
    const before = await bootApp([]);
    apps.push(before);
    await before.get(QueueService).enqueue(queue, 'from before the partitioning');
    const three = await bootApp([], { queues: { [queue]: { partitions: 3 } } });
    apps.push(three);
    const queues = three.get(QueueService);
    await queues.setLimits(queue, { globalConcurrency: 10, rateLimit: { max: 9, windowMs: 500 } });
    // The queue itself drains its old job under the limits it had (none): no share.
    const shares = await sharesOf(queues, queue);
    expect(shares).toEqual([null, 4, 3, 3]);
    expect((await queues.getLimits(queue)).globalConcurrency).toBe(10);
    expect((await queues.getLimits(queue)).rateLimit).toEqual({ max: 9, windowMs: 500 });

    // Back to one partition: new jobs go to the queue itself, which takes a share again beside
    // the three draining partitions.
    const one = await bootApp([], { queues: { [queue]: { partitions: 1 } } });
    apps.push(one);
    const back = one.get(QueueService);
    await back.setLimits(queue, { globalConcurrency: 10 });
    expect(await sharesOf(back, queue)).toEqual([3, 3, 2, 2]);
    expect((await back.getLimits(queue)).globalConcurrency).toBe(10);
  });
});
