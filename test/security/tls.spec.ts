import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import type { ConnectionOptions } from 'node:tls';
import { EchoMqModule, QueueService, RedisUnavailableError, type Job } from '@app/echomq';
import { describeTarget } from '@app/echomq/connection/describe-target';
import { CapturedLog, type LogLine } from '../support/captured-log';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { DeferredMap, processorClass, waitUntil, withTimeout } from '../worker/fixtures/support';
import { generateCertificates, type TestCertificates } from './support/certificates';
import { pingOverTls, TlsRedisServer } from './support/tls-redis-server';

/** A password that must never reach a log line, whatever fails. */
const PASSWORD = 'tls-s3cret-never-logged';

let certificates: TestCertificates;
let server: TlsRedisServer;
let admin: Redis;

beforeAll(async () => {
  certificates = generateCertificates();
  server = await TlsRedisServer.start(certificates);
  admin = new Redis(server.url, { tls: server.clientTls });
  // Ready before any test: closing a client whose ready check is still in flight leaves ioredis
  // a reconnect timer that keeps the run alive.
  expect(await admin.ping()).toBe('PONG');
});

afterAll(async () => {
  await admin?.quit();
  await server?.destroy();
  certificates?.remove();
});

/** Calls of one command the server counted (INFO commandstats), over its TLS port. */
async function callsOf(command: string): Promise<number> {
  const stats = await admin.info('commandstats');
  const match = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(stats);
  return match ? Number(match[1]) : 0;
}

/** Whether a connection of the server is blocked in `command` now (CLIENT LIST). */
async function blockedIn(command: string): Promise<boolean> {
  const clients = (await admin.call('CLIENT', 'LIST')) as string;
  return clients.split('\n').some((line) => line.includes(` cmd=${command} `) && / flags=\w*b/.test(line));
}

describe('rediss:// with a CA and client certificates', () => {
  const queue = uniqueQueue('tls');
  const started = new DeferredMap();
  const aborted = new DeferredMap();
  let app: INestApplication;
  let queues: QueueService;

  beforeAll(async () => {
    const Worker = processorClass<{ kind: string }>(
      queue,
      { leaseMs: 3_000, backoff: { type: 'fixed', delayMs: 0 }, retainCompletedMs: 60_000 },
      async (job: Job<{ kind: string }>) => {
        started.get(job.id).resolve();
        if (job.data.kind === 'flaky' && job.attempt === 1) throw new Error('first attempt fails');
        if (job.data.kind === 'hold') {
          if (!job.signal.aborted)
            await new Promise((resolve) => job.signal.addEventListener('abort', resolve));
          aborted.get(job.id).resolve();
        }
        return `${job.data.kind} done`;
      },
    );
    app = await bootApp([Worker], { connection: { url: server.url, tls: server.clientTls } });
    queues = app.get(QueueService);
  });

  afterAll(async () => {
    aborted.resolveAll();
    await app?.close();
  });

  it('enqueues, claims, completes, retries, waits for outcomes, wakes and cancels over TLS', async () => {
    const done = await queues.enqueue(queue, { kind: 'ok' });
    // waitFor: the event reader's blocking XREAD on the events stream.
    await expect(queues.waitFor(queue, done, 10_000)).resolves.toBe('ok done');

    const flaky = await queues.enqueue(queue, { kind: 'flaky' });
    await expect(queues.waitFor(queue, flaky, 10_000)).resolves.toBe('flaky done');
    expect(await queues.getJob(queue, flaky)).toMatchObject({ state: 'completed', attempts: 2 });

    // The worker is idle, blocked in BLPOP on the wake list; an enqueue wakes it.
    await waitUntil(() => blockedIn('blpop'), 'the idle worker blocked in BLPOP');
    const woken = await queues.enqueue(queue, { kind: 'ok' });
    await expect(queues.waitFor(queue, woken, 10_000)).resolves.toBe('ok done');

    // Removing a running job aborts its handler through the cancels stream.
    const hold = await queues.enqueue(queue, { kind: 'hold' });
    await withTimeout(started.get(hold).promise, 10_000, 'the held job started');
    expect(await queues.remove(queue, hold)).toBe('active');
    await withTimeout(aborted.get(hold).promise, 10_000, 'the removed job aborted');

    expect(await queues.metrics(queue)).toMatchObject({ completed: 3, failed: 1 });
    for (const command of ['evalsha', 'blpop', 'xread']) expect(await callsOf(command)).toBeGreaterThan(0);
  });
});

describe('a client the TLS server refuses', () => {
  it('gets no reply without a client certificate: the server ends the handshake', async () => {
    const answered = await pingOverTls(server.port, server.clientTls);
    expect(answered).toBe('+PONG');
    const refused = await pingOverTls(server.port, { ca: certificates.ca.cert });
    expect(refused).not.toBe('+PONG');
    expect(refused).toMatch(/^error: .*certificate required|^closed$/);
  });

  const wrongCa = (): ConnectionOptions => ({
    ...server.clientTls,
    ca: certificates.otherCa.cert,
  });
  const noCertificate = (): ConnectionOptions => ({ ca: certificates.ca.cert });

  it.each([
    [
      'trusts another CA',
      wrongCa,
      /self-signed certificate in certificate chain|unable to get local issuer certificate/,
    ],
    [
      'has no client certificate',
      noCertificate,
      /certificate required|socket hang up|ECONNRESET|Connection is closed/,
    ],
  ])(
    'fails an enqueue with REDIS_UNAVAILABLE when it %s, naming why, within one command deadline',
    async (_, tls, why) => {
      const log = new CapturedLog();
      const target = `127.0.0.1:${server.port}`;
      const moduleRef = await Test.createTestingModule({
        imports: [
          EchoMqModule.forRoot({
            // ioredis waits up to disconnectTimeout (2 s) for a refused TLS socket to close before it
            // drops it, on a timer that would outlive the test: a short one keeps the run tidy.
            connection: { url: `rediss://app:${PASSWORD}@${target}`, tls: tls(), disconnectTimeout: 50 },
            commandTimeoutMs: 500,
          }),
        ],
      })
        .setLogger(log)
        .compile();
      const app = moduleRef.createNestApplication({ logger: log });
      try {
        await app.init();
        const cannotReach = (line: LogLine): boolean =>
          line.level === 'warn' && line.message.startsWith(`EchoMQ cannot reach Redis at ${target} `);
        const [warning] = await log.waitFor(cannotReach, 1, 10_000);
        expect(warning.message).toMatch(why);
        const refused: unknown = await withTimeout(
          app
            .get(QueueService)
            .enqueue(uniqueQueue('tls-refused'), 'x')
            .catch((error: unknown) => error),
          10_000,
          'an enqueue that cannot reach Redis',
        );
        expect(refused).toBeInstanceOf(RedisUnavailableError);
        expect(refused).toMatchObject({ code: 'REDIS_UNAVAILABLE', target });
        expect(log.lines.filter((line) => line.message.includes(PASSWORD))).toEqual([]);
      } finally {
        await app.close();
      }
    },
  );
});

describe('describeTarget for a rediss URL', () => {
  it('names host and port, never the credentials', () => {
    expect(describeTarget(server.url, { tls: server.clientTls })).toBe(`127.0.0.1:${server.port}`);
    expect(describeTarget('rediss://127.0.0.1:6390', {})).toBe('127.0.0.1:6390');
    expect(describeTarget(undefined, { host: '10.0.0.5', port: 6380, password: PASSWORD, tls: {} })).toBe(
      '10.0.0.5:6380',
    );
    expect(describeTarget(`rediss://app:${PASSWORD}@127.0.0.1:6390/2`, { tls: {} })).toBe('127.0.0.1:6390');
    expect(describeTarget(`rediss://:${PASSWORD}@10.0.0.5`, {})).toBe('10.0.0.5:6379');
  });
});
