import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import * as v from 'valibot';
import { z } from 'zod';
import {
  defineQueue,
  EchoMqModule,
  InjectQueue,
  JobDataInvalidError,
  JobFailedError,
  Processor,
  QueueService,
  type Job,
  type QueueHandle,
} from '@app/echomq';
import { connect, redisUrl, uniqueQueue } from '../support/redis';

const apps: INestApplication[] = [];
const redis = connect();

async function boot(imports: unknown[], providers: unknown[] = []): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [EchoMqModule.forRoot({ connection: { url: redisUrl() } }), ...(imports as never[])],
    providers: providers as never[],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  apps.push(app);
  await app.init();
  return app;
}

async function keysOf(queue: string): Promise<string[]> {
  return redis.keys(`emq:{${queue}}:*`);
}

afterEach(async () => {
  while (apps.length > 0) await apps.pop()!.close();
});
afterAll(() => redis.quit());

describe('typed queues', () => {
  it('a feature module injects the typed handle; a @Processor(definition) serves it; waitFor gives the typed result', async () => {
    const Emails = defineQueue<{ to: string }, { sentTo: string }>(uniqueQueue('typed'));

    @Processor(Emails)
    class EmailProcessor {
      process(job: Job<{ to: string }>): { sentTo: string } {
        return { sentTo: job.data.to };
      }
    }

    @Injectable()
    class Mailer {
      constructor(@InjectQueue(Emails) readonly emails: QueueHandle<typeof Emails>) {}
    }

    @Module({ imports: [EchoMqModule.forFeature([Emails])], providers: [Mailer], exports: [Mailer] })
    class MailModule {}

    const app = await boot([MailModule], [EmailProcessor]);
    const { emails } = app.get(Mailer);
    expect(emails.name).toBe(Emails.name);
    const id = await emails.enqueue({ to: 'a@example.com' });
    await expect(emails.waitFor(id, 10_000)).resolves.toEqual({ sentTo: 'a@example.com' });
  });

  it.each([
    ['zod', z.object({ to: z.string().email() })],
    ['valibot', v.object({ to: v.pipe(v.string(), v.email()) })],
  ])(
    'a %s data schema refuses a bad payload at enqueue with a typed error, writing nothing',
    async (_name, schema) => {
      const Emails = defineQueue(uniqueQueue('schema'), { data: schema });
      const app = await boot([]);
      const queues = app.get(QueueService);
      const handle = queues.queue(Emails);

      const refused = handle.enqueue({ to: 'not an address' });
      await expect(refused).rejects.toBeInstanceOf(JobDataInvalidError);
      await expect(refused).rejects.toMatchObject({ code: 'INVALID_JOB_DATA', issues: [{ path: ['to'] }] });
      // By plain name too, once the definition is known to the application; a batch is all or nothing.
      await expect(
        queues.enqueueMany(Emails.name, [{ data: { to: 'a@example.com' } }, { data: { to: 7 } }]),
      ).rejects.toMatchObject({ code: 'INVALID_JOB_DATA', index: 1 });
      expect(await keysOf(Emails.name)).toEqual([]);
      expect(await queues.listQueues()).not.toContain(Emails.name);

      await handle.enqueue({ to: 'a@example.com' });
      expect((await handle.counts()).pending).toBe(1);
    },
  );

  it('stores the payload as enqueued and hands the handler what the schema makes of it, even a transform', async () => {
    const Greetings = defineQueue(uniqueQueue('output'), {
      data: z.object({
        name: z.string(),
        greeting: z.string().default('hello'),
        at: z.string().transform((text) => Date.parse(text)),
      }),
    });
    const seen: unknown[] = [];

    @Processor(Greetings, { retainCompletedMs: 60_000 })
    class Greeter {
      process(job: Job<{ name: string; greeting: string; at: number }>): string {
        seen.push(job.data);
        return `${job.data.greeting} ${job.data.name}`;
      }
    }

    const app = await boot([], [Greeter]);
    const handle = app.get(QueueService).queue(Greetings);
    const id = await handle.enqueue({ name: 'Ada', at: '2026-12-01T00:00:00Z' });
    await expect(handle.waitFor(id, 10_000)).resolves.toBe('hello Ada');
    // Parsed once, at claim: a transforming schema never meets its own output.
    expect(seen).toEqual([{ name: 'Ada', greeting: 'hello', at: Date.parse('2026-12-01T00:00:00Z') }]);
    expect(await handle.getJob(id)).toMatchObject({
      state: 'completed',
      data: { name: 'Ada', at: '2026-12-01T00:00:00Z' },
    });
  });

  it('a job enqueued without the schema (another producer) is checked at claim and goes to dead, not retried', async () => {
    const name = uniqueQueue('claimcheck');
    const Orders = defineQueue(name, { data: z.object({ sku: z.string() }) });
    const calls: unknown[] = [];

    @Processor(Orders, { maxAttempts: 5 })
    class OrderProcessor {
      process(job: Job<{ sku: string }>): void {
        calls.push(job.data);
      }
    }

    const producer = await boot([]);
    const id = await producer.get(QueueService).enqueue(name, { sku: 42 });
    const worker = await boot([], [OrderProcessor]);
    const waited = worker.get(QueueService).waitFor(name, id, 10_000);
    await expect(waited).rejects.toBeInstanceOf(JobFailedError);
    await expect(waited).rejects.toThrow(/INVALID_JOB_DATA|does not match its schema/);
    const view = await worker.get(QueueService).getJob(name, id);
    expect(view).toMatchObject({ state: 'dead', attempts: 1 });
    expect(calls).toEqual([]);
  });

  it('a result its schema refuses sends the job to dead', async () => {
    const Reports = defineQueue(uniqueQueue('result'), { result: z.object({ rows: z.number() }) });

    @Processor(Reports)
    class ReportProcessor {
      process(): { rows: number } {
        return { rows: 'many' as unknown as number };
      }
    }

    const app = await boot([], [ReportProcessor]);
    const handle = app.get(QueueService).queue(Reports);
    const id = await handle.enqueue({});
    await expect(handle.waitFor(id, 10_000)).rejects.toThrow(/does not match its schema/);
    expect((await handle.getJob(id))?.state).toBe('dead');
  });

  it('refuses two definitions of one queue with different schemas', async () => {
    const name = uniqueQueue('twice');
    const app = await boot([]);
    const queues = app.get(QueueService);
    queues.queue(defineQueue(name, { data: z.string() }));
    expect(() => queues.queue(defineQueue(name, { data: z.number() }))).toThrow(/defined twice/);
  });

  it('refuses a schema that does not implement Standard Schema', () => {
    expect(() => defineQueue('bad-schema', { data: { parse: () => 1 } as never })).toThrow(/Standard Schema/);
  });
});
