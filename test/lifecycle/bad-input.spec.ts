import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import fc from 'fast-check';
import {
  EchoMqModule,
  InvalidArgumentError,
  InvalidJobIdError,
  InvalidQueueNameError,
  JOB_IDS,
  PayloadTooLargeError,
  QueueService,
  claimJobs,
  completeJob,
  enqueueJobs,
  extendLeases,
  failJob,
  readJobView,
  readJobViews,
  releaseJobs,
  removeJob,
  retryDead,
  type ClaimedJobRecord,
  type ScriptContext,
} from '@app/echomq/internal';
import { Redis } from 'ioredis';
import { jobRecord } from '../support/assertions';
import { openMonitor } from '../support/monitor';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { RedisServer } from '../support/redis-server';

const MARKER = 'emq-test-marker-';

/**
 * Sees, through MONITOR on a connection of its own, every command some clients send.
 * MONITOR names each command's client, so other suites sharing the Redis do not disturb
 * the count; an ECHO marker sent on each watched client brackets the window exactly
 * (Redis runs one client's commands in order), with no timing involved.
 */
class CommandWatch {
  private readonly log: { source: string; args: string[] }[] = [];
  private waiters: { source: string; marker: string; resolve: () => void }[] = [];
  private readonly sources = new Map<Redis, string>();
  private markers = 0;

  private constructor(private readonly monitor: Redis) {
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      this.log.push({ source, args });
      this.waiters = this.waiters.filter((waiter) => {
        const hit =
          waiter.source === source && args[0]?.toLowerCase() === 'echo' && args[1] === waiter.marker;
        if (hit) waiter.resolve();
        return !hit;
      });
    });
  }

  static async start(): Promise<CommandWatch> {
    const monitor = await openMonitor();
    return new CommandWatch(monitor);
  }

  async stop(): Promise<void> {
    this.monitor.disconnect();
  }

  private async sourceOf(client: Redis): Promise<string> {
    let source = this.sources.get(client);
    if (!source) {
      const info = String(await client.client('INFO'));
      source = /(?:^|\s)addr=(\S+)/.exec(info)?.[1] ?? '';
      this.sources.set(client, source);
    }
    return source;
  }

  /** Sends a marker on every client and returns once MONITOR has seen them all. */
  async mark(clients: readonly Redis[]): Promise<number> {
    const marker = `${MARKER}${this.markers++}`;
    await Promise.all(
      clients.map(async (client) => {
        const source = await this.sourceOf(client);
        const seen = new Promise<void>((resolve) => this.waiters.push({ source, marker, resolve }));
        await client.echo(marker);
        await seen;
      }),
    );
    return this.log.length;
  }

  /** Commands the clients sent between two marks, markers left out. */
  async sentBetween(from: number, to: number, clients: readonly Redis[]): Promise<string[][]> {
    const sources = new Set(await Promise.all(clients.map((client) => this.sourceOf(client))));
    return this.log
      .slice(from, to)
      .filter(({ source }) => sources.has(source))
      .filter(({ args }) => !(args[0]?.toLowerCase() === 'echo' && args[1]?.startsWith(MARKER)))
      .map(({ args }) => args);
  }
}

describe('bad input is refused before any command is sent', () => {
  let watch: CommandWatch;
  let scripts: Redis;
  let app: INestApplication;
  let queues: QueueService;
  let ctx: ScriptContext;
  let held: ClaimedJobRecord;
  const mint = idMinter(22);
  const QUEUE = uniqueQueue('bad-input');

  const BAD_QUEUES: unknown[] = [
    '',
    'a{b}',
    '{x',
    'a:b',
    'a b',
    ' q',
    'q\n',
    'x'.repeat(65),
    'é',
    42,
    null,
    undefined,
    {},
    ['q'],
  ];
  const BAD_IDS: unknown[] = [
    '',
    'JOB',
    'JOB0000000000',
    'JOB000000000000',
    'job00000000000',
    'JOX00000000000',
    'JOBzzzzzzzzzzz',
    'JOB0000000000:',
    'JOB000000000}{',
    'JOB0000000000*',
    ' JOB0000000000',
    '*',
    42,
    null,
    undefined,
    {},
  ];

  /** Every client this file's EchoMQ code talks through: the script connection and the module's. */
  function clients(): Redis[] {
    return [scripts, queues.context(QUEUE).redis as Redis];
  }

  /** The queue's keys, and the registry membership, as one comparable value. */
  async function queueKeyCount(): Promise<number> {
    let count = 0;
    let cursor = '0';
    do {
      const [next, keys] = await scripts.scan(cursor, 'MATCH', `emq:{${QUEUE}}:*`, 'COUNT', 1000);
      cursor = next;
      count += keys.length;
    } while (cursor !== '0');
    return count;
  }

  /** Runs `action`, which must reject with `errorType`, and proves that it sent nothing. */
  async function expectRefusedUnsent(
    action: () => Promise<unknown>,
    errorType: new (...args: never[]) => Error,
  ): Promise<void> {
    const keysBefore = await queueKeyCount();
    const from = await watch.mark(clients());
    let outcome: unknown;
    try {
      await action();
      outcome = 'resolved';
    } catch (error) {
      outcome = error;
    }
    const to = await watch.mark(clients());
    expect({ refusedWith: outcome instanceof errorType ? errorType.name : outcome }).toEqual({
      refusedWith: errorType.name,
    });
    expect(await watch.sentBetween(from, to, clients())).toEqual([]);
    expect(await queueKeyCount()).toBe(keysBefore);
  }

  // A redis-server of this suite's own: MONITOR on the shared one, under the traffic of
  // every other suite running in parallel, made ioredis lose track of its replies.
  let server: RedisServer;
  let sharedUrl: string | undefined;

  beforeAll(async () => {
    server = await RedisServer.start();
    sharedUrl = process.env.REDIS_URL;
    process.env.REDIS_URL = server.url;
    watch = await CommandWatch.start();
    scripts = connect();
    ctx = scriptContext(scripts, QUEUE);
    const moduleRef = await Test.createTestingModule({
      imports: [EchoMqModule.forRoot({ connection: { url: process.env.REDIS_URL }, nodeId: 5 })],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    queues = app.get(QueueService);
    // Some state to not disturb: two pending jobs, one claimed.
    await enqueueJobs(ctx, [jobRecord(mint()), jobRecord(mint())], 60_000);
    [held] = (await claimJobs(ctx, { count: 1, leaseMs: 60_000, claimantPrefix: 'w' })).jobs;
    await queues.enqueue(QUEUE, { via: 'service' });
  });
  afterAll(async () => {
    await app.close();
    await scripts.quit();
    await watch.stop();
    process.env.REDIS_URL = sharedUrl;
    await server.destroy();
  });

  it('the measurement sees a valid call (positive control)', async () => {
    const from = await watch.mark(clients());
    await queues.getJob(QUEUE, held.id);
    await readJobView(ctx, held.id);
    const to = await watch.mark(clients());
    const sent = await watch.sentBetween(from, to, clients());
    // Two script calls (MONITOR may show EVALSHA or the EVAL ioredis falls back to).
    expect(sent).toHaveLength(2);
    for (const args of sent) expect(args[0].toLowerCase()).toMatch(/^eval(sha)?$/);
  });

  describe('QueueService with an invalid queue name', () => {
    const calls: [string, (q: string) => Promise<unknown>][] = [
      ['enqueue', (q) => queues.enqueue(q, { a: 1 })],
      ['enqueueMany', (q) => queues.enqueueMany(q, [{ data: 1 }])],
      ['getJob', (q) => queues.getJob(q, held.id)],
      ['browse', (q) => queues.browse(q, 'pending')],
      ['listJobs', (q) => queues.listJobs(q, 'dead')],
      ['counts', (q) => queues.counts(q)],
      ['metrics', (q) => queues.metrics(q)],
      ['retry', (q) => queues.retry(q, held.id)],
      ['remove', (q) => queues.remove(q, held.id)],
      ['pause', (q) => queues.pause(q)],
      ['resume', (q) => queues.resume(q)],
      ['isPaused', (q) => queues.isPaused(q)],
      ['register', (q) => queues.register(q)],
    ];
    it.each(calls)('%s', async (_name, call) => {
      for (const queue of BAD_QUEUES) {
        await expectRefusedUnsent(() => call(queue as string), InvalidQueueNameError);
      }
    });

    it('context() throws synchronously', () => {
      for (const queue of BAD_QUEUES)
        expect(() => queues.context(queue as string)).toThrow(InvalidQueueNameError);
    });

    it('a BigInt queue name is refused with InvalidQueueNameError too', async () => {
      await expectRefusedUnsent(
        () => queues.getJob(10n as unknown as string, held.id),
        InvalidQueueNameError,
      );
    });
  });

  describe('QueueService with a malformed job id', () => {
    it.each([
      ['getJob', (id: string) => queues.getJob(QUEUE, id)],
      ['retry', (id: string) => queues.retry(QUEUE, id)],
      ['remove', (id: string) => queues.remove(QUEUE, id)],
      ['browse after', (id: string) => queues.browse(QUEUE, 'pending', { after: id })],
    ] as const)('%s', async (name, call) => {
      // For browse, an absent `after` means no paging at all, not a malformed id.
      const ids = name === 'browse after' ? BAD_IDS.filter((id) => id !== undefined) : BAD_IDS;
      for (const id of ids) await expectRefusedUnsent(() => call(id as string), InvalidJobIdError);
    });

    it('getJob on arbitrary non-id strings (property)', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc
            .oneof(fc.string(), fc.string({ unit: 'binary', minLength: 14, maxLength: 14 }))
            .filter((s) => !JOB_IDS.valid(s)),
          async (id) => {
            await expectRefusedUnsent(() => queues.getJob(QUEUE, id), InvalidJobIdError);
          },
        ),
        { numRuns: 40 },
      );
    });
  });

  describe('QueueService.enqueue with bad options', () => {
    const cases: [string, () => Promise<unknown>, new (...args: never[]) => Error][] = [
      ['a negative delay', () => queues.enqueue(QUEUE, 1, { delayMs: -1 }), InvalidArgumentError],
      ['a fractional delay', () => queues.enqueue(QUEUE, 1, { delayMs: 1.5 }), InvalidArgumentError],
      ['maxAttempts 0', () => queues.enqueue(QUEUE, 1, { maxAttempts: 0 }), InvalidArgumentError],
      ['maxAttempts -3', () => queues.enqueue(QUEUE, 1, { maxAttempts: -3 }), InvalidArgumentError],
      ['an invalid runAt', () => queues.enqueue(QUEUE, 1, { runAt: new Date('nope') }), InvalidArgumentError],
      [
        'a name of 129 characters',
        () => queues.enqueue(QUEUE, 1, { name: 'n'.repeat(129) }),
        InvalidArgumentError,
      ],
      [
        'an empty idempotency key',
        () => queues.enqueue(QUEUE, 1, { idempotencyKey: '' }),
        InvalidArgumentError,
      ],
      ['a BigInt payload', () => queues.enqueue(QUEUE, { amount: 10n }), InvalidArgumentError],
      ['a function payload', () => queues.enqueue(QUEUE, () => 1), InvalidArgumentError],
      ['a payload over 512 KiB', () => queues.enqueue(QUEUE, 'x'.repeat(512 * 1024)), PayloadTooLargeError],
      [
        'one bad job in a batch',
        () => queues.enqueueMany(QUEUE, [{ data: 1 }, { data: 2, delayMs: -5 }]),
        InvalidArgumentError,
      ],
    ];
    it.each(cases)('%s', async (_name, call, errorType) => {
      await expectRefusedUnsent(call, errorType);
    });
  });

  describe('the script wrappers with a malformed id', () => {
    const claimOf = (id: unknown) => ({ id: id as string, attempt: 1, claimant: 'w.0' });
    const cases: [string, (id: unknown) => Promise<unknown>][] = [
      ['enqueueJobs', (id) => enqueueJobs(ctx, [jobRecord(mint()), jobRecord(id as string)], 60_000)],
      ['completeJob', (id) => completeJob(ctx, claimOf(id), '1', 0)],
      ['failJob', (id) => failJob(ctx, claimOf(id), { error: 'e', backoffMs: 0, unrecoverable: false })],
      ['retryDead', (id) => retryDead(ctx, id as string)],
      ['removeJob', (id) => removeJob(ctx, id as string)],
      ['readJobView', (id) => readJobView(ctx, id as string)],
      ['readJobViews', (id) => readJobViews(ctx, [held.id, id as string])],
      ['extendLeases', (id) => extendLeases(ctx, [claimOf(id)], 60_000)],
      ['releaseJobs', (id) => releaseJobs(ctx, [claimOf(id)])],
    ];
    it.each(cases)('%s', async (_name, call) => {
      for (const id of BAD_IDS) await expectRefusedUnsent(() => call(id), InvalidJobIdError);
    });
  });

  it('browse with a state that is not one of the four sets is refused before a key is composed', async () => {
    for (const state of ['completed', 'unknown', 'queue', 'base', 'job', 'metrics']) {
      await expectRefusedUnsent(() => queues.browse(QUEUE, state as 'pending'), InvalidArgumentError);
    }
  });

  it('after all of the above, the queue is as it was', async () => {
    expect(await queues.counts(QUEUE)).toEqual({ pending: 2, active: 1, schedule: 0, dead: 0 });
    expect(await scripts.hget(ctx.keys.job(held.id), 'a')).toBe('1');
  });
});
