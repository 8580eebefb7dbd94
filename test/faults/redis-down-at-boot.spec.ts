import type { INestApplication, Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { EventEmitter } from 'node:events';
import net from 'node:net';
import {
  EchoMqModule,
  InvalidOptionError,
  OnQueueEvent,
  QueueEventsListener,
  QueueService,
  RedisUnavailableError,
  type CompletedEvent,
  type EchoMqModuleOptions,
  type Job,
} from '@app/echomq';
import { Reachability } from '@app/echomq/connection/reachability';
import { CapturedLog, type LogLine } from '../support/captured-log';
import { uniqueQueue } from '../support/redis';
import { freePort, RedisServer } from '../support/redis-server';
import { closeAll, DeferredMap, processorClass, withTimeout } from '../worker/fixtures/support';

/**
 * The user's view of an application started before its Redis: it boots, says so in one
 * line, fails enqueue with a typed error, and once Redis starts it reconnects, mints ids
 * and claims jobs by itself. Redis requires a password here, so the logs can be checked
 * for never showing it.
 */
const PASSWORD = 's3cret-never-logged';
const WITH_USER = ['--user', 'app', 'on', `>${PASSWORD}`, '~*', '&*', '+@all'];

const apps: INestApplication[] = [];
const servers: RedisServer[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};

beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});
afterEach(async () => {
  await closeAll(apps.splice(0));
  for (const server of servers.splice(0)) await server.destroy();
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});

/** Boots an application as a user would, with every log line going to `log`. */
async function boot(
  log: CapturedLog,
  connection: EchoMqModuleOptions['connection'],
  providers: Provider[] = [],
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      EchoMqModule.forRoot({
        connection,
        // A short deadline keeps the test short: an outage is a connection down this long.
        commandTimeoutMs: 1_000,
        shutdownGraceMs: 300,
        reaper: { intervalMs: 200 },
      }),
    ],
    providers,
  })
    .setLogger(log)
    .compile();
  const app = moduleRef.createNestApplication({ logger: log });
  apps.push(app); // closed after the test even if its boot fails
  await app.init();
  return app;
}

const cannotReach =
  (target: string) =>
  (line: LogLine): boolean =>
    line.level === 'warn' && line.message.startsWith(`EchoMQ cannot reach Redis at ${target} `);
const reached =
  (target: string) =>
  (line: LogLine): boolean =>
    line.level === 'log' && line.message.startsWith(`EchoMQ reached Redis at ${target} `);

describe('applications booted while Redis is down', () => {
  it('name a cluster by its seeds and refuse enqueue while none answers', async () => {
    const seeds = [await freePort(), await freePort()].map((port) => ({ host: '127.0.0.1', port }));
    const log = new CapturedLog();
    const app = await boot(log, { cluster: { nodes: seeds } });

    const described = `the cluster seeded by 127.0.0.1:${seeds[0].port}, 127.0.0.1:${seeds[1].port}`;
    await log.waitFor(cannotReach(described));
    const refused: unknown = await app
      .get(QueueService)
      .enqueue(uniqueQueue('cluster-down'), 'x')
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RedisUnavailableError);
    expect(log.matching(cannotReach(described))).toHaveLength(1);
    expect(unhandled).toEqual([]);
  });

  it('a producer boots, says so once, refuses enqueue with REDIS_UNAVAILABLE, and enqueues once Redis starts', async () => {
    const port = await freePort();
    const target = `127.0.0.1:${port}`;
    const log = new CapturedLog();
    const producer = await boot(log, { url: `redis://app:${PASSWORD}@${target}` });
    const queues = producer.get(QueueService);
    const queue = uniqueQueue('producer-down');

    const [warning] = await log.waitFor(cannotReach(target));
    expect(warning.message).toContain('ECONNREFUSED');
    const refused: unknown = await queues.enqueue(queue, 'while down').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RedisUnavailableError);
    expect(refused).toMatchObject({ code: 'REDIS_UNAVAILABLE', target });
    // By now the connection has failed many reconnect attempts: still one line.
    expect(log.matching((line) => /ECONNREFUSED/.test(line.message))).toEqual([warning]);

    servers.push(await RedisServer.start({ port, args: WITH_USER }));
    await log.waitFor(reached(target));
    const id = await queues.enqueue(queue, 'after');
    expect(await queues.getJob(queue, id)).toMatchObject({ state: 'pending', data: 'after' });

    expect(log.matching(reached(target))).toHaveLength(1);
    expect(log.lines.filter((line) => line.message.includes(PASSWORD))).toEqual([]);
    expect(unhandled).toEqual([]);
  });

  it('a worker boots, and claims what a producer enqueues once Redis starts', async () => {
    const port = await freePort();
    const target = `127.0.0.1:${port}`;
    const connection = { url: `redis://app:${PASSWORD}@${target}` };
    const queue = uniqueQueue('worker-down');
    const handled = new DeferredMap<unknown>();
    const Worker = processorClass(queue, { leaseMs: 2_000 }, (job: Job) => {
      handled.get(job.id).resolve(job.data);
      return 'done';
    });
    const log = new CapturedLog();
    const worker = await boot(log, connection, [Worker]);
    const producer = await boot(log, connection);

    // One warning per application (each owns its connections), whatever each connection tried.
    await log.waitFor(cannotReach(target), 2);
    expect(log.matching((line) => /ECONNREFUSED/.test(line.message))).toHaveLength(2);

    servers.push(await RedisServer.start({ port, args: WITH_USER }));
    await log.waitFor(reached(target), 2);
    const id = await producer.get(QueueService).enqueue(queue, 'after');
    await expect(withTimeout(handled.get(id).promise, 15_000, 'the worker never ran the job')).resolves.toBe(
      'after',
    );
    await expect(worker.get(QueueService).waitFor(queue, id, 10_000)).resolves.toBe('done');

    expect(log.matching(cannotReach(target))).toHaveLength(2);
    expect(log.lines.filter((line) => line.message.includes(PASSWORD))).toEqual([]);
    expect(unhandled).toEqual([]);
  });
  it('an app with a queue-events listener boots, and hears events once Redis starts', async () => {
    const port = await freePort();
    const target = `127.0.0.1:${port}`;
    const connection = { url: `redis://app:${PASSWORD}@${target}` };
    const queue = uniqueQueue('listener-down');
    const heard = new DeferredMap<unknown>();

    @QueueEventsListener(queue)
    class Completions {
      @OnQueueEvent('completed')
      completed(event: CompletedEvent): void {
        event.ids.forEach((id, index) => heard.get(id).resolve(event.results[index]));
      }
    }
    const Worker = processorClass(queue, { leaseMs: 2_000 }, () => 'done');
    const log = new CapturedLog();
    const listener = await boot(log, connection, [Completions]);
    await boot(log, connection, [Worker]);
    await log.waitFor(cannotReach(target), 2);

    servers.push(await RedisServer.start({ port, args: WITH_USER }));
    await log.waitFor((line) => line.message.startsWith(`Listening to events of queue ${queue}`));
    const id = await listener.get(QueueService).enqueue(queue, 'after');
    await expect(
      withTimeout(heard.get(id).promise, 15_000, 'the listener never heard the job'),
    ).resolves.toBe('done');
    expect(unhandled).toEqual([]);
  });
});

describe('a connection that names no Redis', () => {
  it.each([
    ['forRoot({})', 'connection', {}],
    ['a url left undefined', 'connection.url', { connection: { url: undefined } }],
    ['an empty connection', 'connection', { connection: {} }],
  ])('%s fails the boot naming option %s, before dialing anything', async (_, option, options) => {
    const dialed = jest.spyOn(net, 'createConnection');
    try {
      const refused: unknown = await Test.createTestingModule({
        imports: [EchoMqModule.forRoot(options as EchoMqModuleOptions)],
      })
        .compile()
        .then(
          () => new Error('the application booted'),
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(InvalidOptionError);
      expect(refused).toMatchObject({ code: 'INVALID_OPTION', option });
      expect(dialed).not.toHaveBeenCalled();
    } finally {
      dialed.mockRestore();
    }
  });
});

describe('what an outage logs', () => {
  it('warns once, reminds once a minute while it lasts, and says once when Redis is back', () => {
    let now = 0;
    const log = new CapturedLog();
    const client = new EventEmitter();
    new Reachability('10.0.0.1:6379', 1_000, log, () => now).watch(client);
    const refused = Object.assign(new Error(''), { code: 'ECONNREFUSED' });

    for (let attempt = 0; attempt < 130; attempt++, now += 1_000) client.emit('error', refused);
    client.emit('ready');
    client.emit('ready');

    expect(log.lines.map((line) => [line.level, line.message.split(' (')[0]])).toEqual([
      ['warn', 'EchoMQ cannot reach Redis at 10.0.0.1:6379'],
      ['warn', 'EchoMQ still cannot reach Redis at 10.0.0.1:6379, for 60.0 s now'],
      ['warn', 'EchoMQ still cannot reach Redis at 10.0.0.1:6379, for 120.0 s now'],
      ['log', 'EchoMQ reached Redis at 10.0.0.1:6379'],
    ]);
    // An error with an empty message (Node's happy-eyeballs AggregateError) is named by its code.
    expect(log.lines[0].message).toContain('(ECONNREFUSED)');
  });
});
