import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { QueueService, type Job } from '@app/echomq';
import { RedisCommandRefusedError } from '@app/echomq/redis-errors';
import { confirmationRefusal } from '@app/echomq/durability/command-refusal';
import { queueKeys } from '@app/echomq/internal';
import { CapturedLog } from '../support/captured-log';
import { uniqueQueue } from '../support/redis';
import { bootLogged } from '../safety/support/apps';
import { aclArguments, refusalsOf, urlAs } from '../security/support/acl';
import { closeAll, processorClass } from '../worker/fixtures/support';
import { ReplicatedPair } from './support/replicated-pair';

/**
 * Durable writes under a Redis user without `+wait` (the documented worker line, which leaves
 * it out as an optional addition): Redis answers WAIT with NOPERM, which no repeat can change.
 * An enqueue then fails at once with RedisCommandRefusedError naming the right, having sent
 * WAIT once (not a 30 s retry that ends in "0 of 1 replicas acknowledged"), and a worker gives
 * each claimed batch back unstarted and backs off between claims instead of claiming again at
 * once. Counted by Redis itself: rejected WAIT calls in INFO commandstats.
 */
const tag = randomBytes(4).toString('hex');
const USER = `emq-nowait-${tag}`;
/** One with +wait whose line lacks +pexpire, the write each confirmation sends before WAIT. */
const NO_PEXPIRE_USER = `emq-nopexpire-${tag}`;
const PASSWORD = randomBytes(12).toString('hex');
/** Long: a refusal that were waited out or retried would leave the test hanging, not passing. */
const DURABLE = { replicas: 1, timeoutMs: 30_000 };

let pair: ReplicatedPair;
const apps: INestApplication[] = [];

beforeAll(async () => {
  pair = await ReplicatedPair.start();
  await pair.onMaster.call('ACL', 'SETUSER', ...aclArguments('emq-worker', USER, PASSWORD, 'emq'));
  await pair.onMaster.call(
    'ACL',
    'SETUSER',
    ...aclArguments('emq-worker', NO_PEXPIRE_USER, PASSWORD, 'emq', {
      extra: ['+wait'],
      without: ['+pexpire'],
    }),
  );
});

afterEach(async () => {
  await closeAll(apps.splice(0));
  await pair.closeApps();
});

afterAll(async () => {
  await pair.destroy();
});

/** An app logged in as `user` (without +wait unless told), with durable writes and every log line kept. */
async function bootWithoutWait(
  log: CapturedLog,
  providers: ReturnType<typeof processorClass>[] = [],
  user = USER,
  nodeId: number | undefined = 9,
) {
  const app = await bootLogged(
    apps,
    log,
    {
      connection: { url: urlAs(user, PASSWORD, pair.master.url) },
      // A configured node by default: a leased one mints only after a renewal WAIT confirmed, refused too.
      ...(nodeId === undefined ? {} : { nodeId }),
      durable: DURABLE,
      shutdownGraceMs: 300,
      reaper: { intervalMs: 100 },
    },
    providers,
  );
  return app.get(QueueService);
}

/** WAIT calls the master refused (ACL or unknown command), from its own counters. */
async function refusedWaits(): Promise<number> {
  const stats = await pair.onMaster.info('commandstats');
  return Number(/^cmdstat_wait:.*rejected_calls=(\d+)/m.exec(stats)?.[1] ?? 0);
}

function expectRefusedWait(error: unknown): void {
  expect(error).toBeInstanceOf(RedisCommandRefusedError);
  expect(error).toMatchObject({
    code: 'REDIS_COMMAND_REFUSED',
    command: 'WAIT',
    right: '+wait',
    target: `127.0.0.1:${pair.master.port}`,
    written: true,
  });
  const { message } = error as Error;
  expect(message).toContain('+wait');
  expect(message).toContain('"Optional additions"');
  expect(message).toMatch(/^Redis at 127\.0\.0\.1:\d+ refused WAIT \(NOPERM /);
  expect(message).not.toContain(PASSWORD);
}

describe.each([
  ['enqueue', (queues: QueueService, queue: string) => queues.enqueue(queue, { n: 1 })],
  [
    'enqueueMany',
    async (queues: QueueService, queue: string) => (await queues.enqueueMany(queue, [{ data: 1 }]))[0],
  ],
  [
    'submit (throttle)',
    async (queues: QueueService, queue: string) =>
      (await queues.submit(queue, { n: 1 }, { throttle: { key: 'k', windowMs: 60_000 } })).id,
  ],
])('durable %s by a user without +wait', (_name, enqueue) => {
  it('fails at once with RedisCommandRefusedError naming +wait, having sent WAIT once', async () => {
    const queue = uniqueQueue('nowait');
    const queues = await bootWithoutWait(new CapturedLog());
    await queues.register(queue);
    const before = await refusedWaits();

    const error = await enqueue(queues, queue).catch((failure: unknown) => failure);
    expectRefusedWait(error);
    // One WAIT, refused, and no repeat of it.
    expect((await refusedWaits()) - before).toBe(1);
    // The job is written on the master, as the error says; only its confirmation was refused.
    expect(await pair.onMaster.zcard(queueKeys(queue).pending)).toBe(1);
    const refusals = await refusalsOf(pair.onMaster, USER);
    expect(refusals).toContainEqual({ reason: 'command', object: 'wait', username: USER });
  });
});

describe('a durable producer with a leased node, whose user lacks +wait', () => {
  it('fails enqueue with the typed error naming +wait, not NODE_LEASE_LOST after the lease wait', async () => {
    const queue = uniqueQueue('nowait-lease');
    const queues = await bootWithoutWait(new CapturedLog(), [], USER, undefined);
    const error = await queues.enqueue(queue, { n: 1 }).catch((failure: unknown) => failure);
    expectRefusedWait(error);
    // Its job is on the master, unconfirmed, and the error names it.
    const pending = await pair.onMaster.zrange(queueKeys(queue).pending, 0, -1);
    expect((error as RedisCommandRefusedError).ids).toEqual(pending);
    expect(pending).toHaveLength(1);
  });
});

describe('durable enqueue by a user with +wait but without +pexpire', () => {
  it('fails at once with RedisCommandRefusedError naming +pexpire', async () => {
    const queue = uniqueQueue('nopexpire');
    const queues = await bootWithoutWait(new CapturedLog(), [], NO_PEXPIRE_USER);
    const error = await queues.enqueue(queue, { n: 1 }).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(RedisCommandRefusedError);
    expect(error).toMatchObject({ command: 'PEXPIRE', right: '+pexpire', written: true });
    expect((error as Error).message).toContain('"An ACL user scoped to one prefix"');
    expect(await pair.onMaster.zcard(queueKeys(queue).pending)).toBe(1);
    expect(await refusalsOf(pair.onMaster, NO_PEXPIRE_USER)).toContainEqual({
      reason: 'command',
      object: 'pexpire',
      username: NO_PEXPIRE_USER,
    });
  });
});

describe('a durable worker whose user lacks +wait', () => {
  it('gives each claim back unstarted and backs off between claims, logging the missing right', async () => {
    const queue = uniqueQueue('nowait-worker');
    let runs = 0;
    const Proc = processorClass(queue, { leaseMs: 60_000, maxAttempts: 1 }, (job: Job) => {
      runs += 1;
      return job.id;
    });
    // Enqueued by a producer with every right and no durable writes.
    const producer = await pair.boot([], undefined, { nodeId: 8 });
    const id = await producer.get(QueueService).enqueue(queue, { n: 1 });
    const log = new CapturedLog();
    const before = await refusedWaits();
    await bootWithoutWait(log, [Proc]);

    // Three refused claims, each followed by the loop's logged retry.
    const retries = await log.waitFor(
      (line) =>
        line.level === 'warn' && /^Claim loop of .*refused WAIT.*\+wait.*retrying$/.test(line.message),
      3,
    );
    expect(retries[0].message).toContain(`Claim loop of ${queue}:`);
    const refused = (await refusedWaits()) - before;
    // Each claim's WAIT was refused once; a loop that claimed again at once would have sent
    // many more than the retries it logged (one WAIT per retry, plus the claim under way).
    expect(refused).toBeGreaterThanOrEqual(3);
    expect(refused).toBeLessThanOrEqual(
      log.matching((line) => /^Claim loop of .*retrying$/.test(line.message)).length + 1,
    );
    expect(runs).toBe(0);
    // Given back unstarted: once the worker stops claiming, pending, its one attempt unspent.
    await closeAll(apps.splice(0));
    expect(runs).toBe(0);
    const view = await producer.get(QueueService).getJob(queue, id);
    expect(view).toMatchObject({ state: 'pending', attemptsLeft: 1 });
  });
});

describe('which replies to a confirmation are refusals for good', () => {
  const reply = (message: string, command: string): Error =>
    Object.assign(new Error(message), { name: 'ReplyError', command: { name: command, args: [] } });

  it('NOPERM for a command, and an unknown command, name the right to grant', () => {
    const noWait = confirmationRefusal(
      reply("NOPERM this user has no permissions to run the 'wait' command", 'wait'),
      'h:1',
    );
    expect(noWait).toMatchObject({ command: 'WAIT', right: '+wait', written: false, target: 'h:1' });
    const unknown = confirmationRefusal(
      reply("ERR unknown command 'WAIT', with args beginning with: '1' ", 'wait'),
      'h:1',
    );
    expect(unknown).toMatchObject({ command: 'WAIT', right: '+wait' });
    expect(unknown?.message).toContain("ERR unknown command 'WAIT'");
    const key = confirmationRefusal(
      reply('NOPERM this user has no permissions to access one of the keys used as arguments', 'pexpire'),
      'h:1',
    );
    expect(key).toMatchObject({ command: 'PEXPIRE', right: 'its key pattern (~<prefix>:*)' });
  });

  it('a replica answering, or a lost connection, is not one: a later try may succeed', () => {
    expect(
      confirmationRefusal(reply('ERR WAIT cannot be used with replica instances.', 'wait'), 'h:1'),
    ).toBeUndefined();
    expect(
      confirmationRefusal(reply("READONLY You can't write against a read only replica.", 'pexpire'), 'h:1'),
    ).toBeUndefined();
    expect(confirmationRefusal(new Error('Connection is closed.'), 'h:1')).toBeUndefined();
    expect(confirmationRefusal(null, 'h:1')).toBeUndefined();
  });
});
