import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  defineQueue,
  EchoMqModule,
  InvalidArgumentError,
  Processor,
  QueueService,
  type Job,
} from '@app/echomq';
import {
  EchoMqTestKit,
  JobExpectationError,
  RunTimeoutError,
  startRedis,
  type TestRedis,
} from '@app/echomq/testing';

// The kit as a user's suite uses it: a redis-server of its own (not the suite's), an
// application booted with startProcessors: false, and the kit's runs and expectations.

interface Email {
  readonly to: string;
  readonly template: string;
}
const Emails = defineQueue<Email, { sent: string }>('emails');

const calls = { emails: 0, receipts: 0, flaky: 0, reports: 0 };

@Processor(Emails)
class EmailProcessor {
  process(job: Job<Email>): { sent: string } {
    calls.emails += 1;
    return { sent: job.data.to };
  }
}

@Processor('receipts')
class ReceiptProcessor {
  process(job: Job<{ order: number }>): number {
    calls.receipts += 1;
    return job.data.order * 10;
  }
}

/** Fails every attempt; its backoff is an hour, so its retries wait in schedule. */
@Processor('flaky', { maxAttempts: 3, backoff: { type: 'fixed', delayMs: 3_600_000 } })
class FlakyProcessor {
  process(): never {
    calls.flaky += 1;
    throw new Error('smtp refused the connection');
  }
}

/** Never finishes on its own: it returns only when its signal aborts. */
@Processor('stuck')
class StuckProcessor {
  aborted = 0;
  async process(job: Job): Promise<void> {
    await new Promise((resolve) => job.signal.addEventListener('abort', resolve, { once: true }));
    this.aborted += 1;
  }
}

/** Keeps completed rows, so expectCompleted can read them. */
@Processor('reports', { retainCompletedMs: 60_000 })
class ReportProcessor {
  process(job: Job<{ month: string }>): { rows: number } {
    calls.reports += 1;
    return { rows: job.data.month.length };
  }
}

let redis: TestRedis;
let app: INestApplication;
let kit: EchoMqTestKit;
let queues: QueueService;

beforeAll(async () => {
  redis = await startRedis({ url: false });
  const moduleRef = await Test.createTestingModule({
    imports: [EchoMqModule.forRoot({ ...redis.moduleOptions, startProcessors: false, shutdownGraceMs: 500 })],
    providers: [EmailProcessor, ReceiptProcessor, FlakyProcessor, StuckProcessor, ReportProcessor],
  }).compile();
  app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  kit = EchoMqTestKit.from(app);
  queues = app.get(QueueService);
});

afterAll(async () => {
  await app?.close();
  await redis?.stop();
});

describe('a testing kit on a redis-server of its own', () => {
  it('starts a server of its own even when REDIS_URL is set', () => {
    expect(redis.ownsServer).toBe(true);
    expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}`);
    expect(redis.url).not.toBe(process.env.REDIS_URL);
    expect(redis.keyPrefix).toBeUndefined();
  });

  it('finds enqueued jobs by a partial match, and lists what was there when none matches', async () => {
    const emails = queues.queue(Emails);
    await emails.enqueue({ to: 'ada@example.com', template: 'welcome' });
    await emails.enqueue({ to: 'alan@example.com', template: 'welcome' });

    const [found] = await kit.expectEnqueued(Emails, { data: { to: 'ada@example.com' } });
    expect(found.data).toEqual({ to: 'ada@example.com', template: 'welcome' });
    expect(found.state).toBe('pending');
    expect(await kit.enqueued(Emails, { data: { template: /^wel/ } })).toHaveLength(2);
    expect(await kit.enqueued(Emails, (job) => job.data.to.startsWith('alan'))).toHaveLength(1);

    const failure = await kit.expectEnqueued(Emails, { data: { to: 'grace@example.com' } }).catch((e) => e);
    expect(failure).toBeInstanceOf(JobExpectationError);
    const message = (failure as Error).message;
    expect(message).toContain(
      `expectEnqueued('emails'): no pending or scheduled job matches {"data":{"to":"grace@example.com"}}`,
    );
    expect(message).toContain('2 pending or scheduled job(s):');
    expect(message).toContain('data.to: expected "grace@example.com", got "ada@example.com"');
    expect(message).toContain('data.to: expected "grace@example.com", got "alan@example.com"');
    // Processors were not started: the jobs wait for runUntilIdle.
    expect(calls.emails).toBe(0);
  });

  it('runs the enqueued jobs to completion on demand, and again after more are enqueued', async () => {
    await queues.enqueueMany('receipts', [
      { data: { order: 1 } },
      { data: { order: 2 } },
      { data: { order: 3 } },
    ]);

    const summary = await kit.runUntilIdle('receipts');

    expect(calls.receipts).toBe(3);
    expect(summary).toMatchObject({ completed: 3, failed: 0, dead: 0, scheduled: 0 });
    const results = summary.outcomes.map((outcome) => (outcome.outcome === 'completed' ? outcome.result : 0));
    expect(results.sort()).toEqual([10, 20, 30]);
    expect(await kit.enqueued('receipts')).toEqual([]);

    const id = await queues.enqueue('receipts', { order: 4 });
    expect((await kit.expectEnqueued('receipts', { id }))[0].state).toBe('pending');
    expect((await kit.runUntilIdle('receipts')).completed).toBe(1);
    expect(calls.receipts).toBe(4);
  });

  it('carries the result type of a typed queue into the summary', async () => {
    await queues.queue(Emails).enqueue({ to: 'edsger@example.com', template: 'digest' });
    const summary = await kit.runUntilIdle(Emails);
    const sent = summary.outcomes.flatMap((outcome) =>
      outcome.outcome === 'completed' ? [outcome.result.sent] : [],
    );
    expect(sent).toContain('edsger@example.com');
    expect(calls.emails).toBeGreaterThan(0);
  });

  it('leaves retries in schedule unless includeDelayed makes them due, and reports the job dead', async () => {
    await queues.enqueue('flaky', { to: 'nobody' });

    const first = await kit.runUntilIdle('flaky');
    expect(first).toMatchObject({ completed: 0, failed: 1, dead: 0, scheduled: 1 });
    expect((await kit.expectEnqueued('flaky', { state: 'schedule' }))[0].lastError).toContain('smtp refused');

    const rest = await kit.runUntilIdle('flaky', { includeDelayed: true });
    expect(rest).toMatchObject({ completed: 0, failed: 2, dead: 1, scheduled: 0 });
    expect(rest.outcomes.map((outcome) => outcome.outcome === 'failed' && outcome.movedTo)).toEqual([
      'schedule',
      'dead',
    ]);
    expect(calls.flaky).toBe(3);
    const [dead] = await kit.expectDead('flaky', { lastError: /smtp refused/, attempts: 3 });
    expect(dead.data).toEqual({ to: 'nobody' });
    await expect(kit.expectDead('flaky', { data: { to: 'somebody' } })).rejects.toThrow(
      'data.to: expected "somebody", got "nobody"',
    );
  });

  it('rejects at its timeout, having released the job it could not finish', async () => {
    const id = await queues.enqueue('stuck', { n: 1 });

    const failure = await kit.runUntilIdle('stuck', { timeoutMs: 300 }).catch((e) => e);

    expect(failure).toBeInstanceOf(RunTimeoutError);
    expect((failure as RunTimeoutError).code).toBe('RUN_TIMEOUT');
    expect((failure as Error).message).toContain(
      "runUntilIdle('stuck') did not finish within 300 ms: 1 active, 0 pending, 0 scheduled",
    );
    expect((failure as Error).message).toContain('released to pending');
    expect(app.get(StuckProcessor).aborted).toBe(1);
    const [job] = await kit.expectEnqueued('stuck', { id, state: 'pending' });
    expect(job.attemptsLeft).toBe(job.maxAttempts); // a release spends no attempt
  });

  it('reads completed jobs back when their queue keeps them', async () => {
    await queues.enqueue('reports', { month: 'march' });
    await queues.enqueue('reports', { month: 'may' });
    expect((await kit.runUntilIdle('reports')).completed).toBe(2);

    const [march] = await kit.expectCompleted('reports', { data: { month: 'march' }, result: { rows: 5 } });
    expect(march.state).toBe('completed');
    expect(await kit.completed('reports')).toHaveLength(2);
    await expect(kit.expectCompleted('reports', { data: { month: 'june' } })).rejects.toThrow(
      "expectCompleted('reports'): no completed job matches",
    );
  });

  it('refuses to run a queue that no processor of the application serves', async () => {
    await expect(kit.runUntilIdle('nobody-serves-this')).rejects.toThrow(InvalidArgumentError);
    await expect(kit.runUntilIdle('nobody-serves-this')).rejects.toThrow(
      "No @Processor serves queue 'nobody-serves-this' in this application",
    );
  });

  it('refuses a timeout out of range before anything runs', async () => {
    await expect(kit.runUntilIdle(Emails, { timeoutMs: 0 })).rejects.toThrow(InvalidArgumentError);
  });
});
