import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { RedisConnections } from '@app/echomq/internal';
import { readWorkerConfig } from '../../apps/worker/src/worker-config';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import { startApi, type RunningApi } from '../api/support/api';
import { waitUntil } from '../worker/fixtures/support';
import { generateCertificates, type KeyPair, type TestCertificates } from './support/certificates';
import { TlsRedisServer } from './support/tls-redis-server';

/**
 * The api and the worker host take TLS to Redis from the environment: EMQ_REDIS_TLS_CA_FILE,
 * _CERT_FILE and _KEY_FILE (PEM files read at boot) and EMQ_REDIS_TLS_SERVERNAME, against a
 * redis-server that speaks TLS only and asks every client for a certificate (its own
 * certificate names 127.0.0.1 and SERVERNAME). A bad setting stops the boot, naming it.
 */
const SERVERNAME = 'redis.echomq.test';

let certificates: TestCertificates;
let server: TlsRedisServer;
let admin: Redis;

/** A server certificate for 127.0.0.1 and SERVERNAME, signed by the test CA. */
function namedServerCertificate(certs: TestCertificates): KeyPair {
  const openssl = (args: string[]): void => {
    execFileSync('openssl', args, { cwd: certs.dir, stdio: ['ignore', 'ignore', 'pipe'] });
  };
  openssl(
    ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${SERVERNAME}`].concat([
      '-keyout',
      'named.key',
      '-out',
      'named.csr',
    ]),
  );
  writeFileSync(
    join(certs.dir, 'named.ext'),
    `subjectAltName = IP:127.0.0.1, DNS:${SERVERNAME}\nextendedKeyUsage = serverAuth\n`,
  );
  openssl(
    ['x509', '-req', '-in', 'named.csr', '-CA', certs.ca.certFile, '-CAkey', certs.ca.keyFile].concat([
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      'named.ext',
      '-out',
      'named.crt',
    ]),
  );
  const certFile = join(certs.dir, 'named.crt');
  const keyFile = join(certs.dir, 'named.key');
  return { certFile, keyFile, cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
}

/** The four variables, for a client the server accepts. */
function tlsEnvironment(): Record<string, string> {
  return {
    REDIS_URL: server.url,
    EMQ_REDIS_TLS_CA_FILE: certificates.ca.certFile,
    EMQ_REDIS_TLS_CERT_FILE: certificates.client.certFile,
    EMQ_REDIS_TLS_KEY_FILE: certificates.client.keyFile,
    EMQ_REDIS_TLS_SERVERNAME: SERVERNAME,
  };
}

beforeAll(async () => {
  certificates = generateCertificates();
  server = await TlsRedisServer.start({ ...certificates, server: namedServerCertificate(certificates) });
  admin = new Redis(server.url, { tls: server.clientTls });
  expect(await admin.ping()).toBe('PONG');
});

afterAll(async () => {
  await admin?.quit();
  await server?.destroy();
  certificates?.remove();
});

describe('EMQ_REDIS_TLS_* on both hosts', () => {
  let api: RunningApi | undefined;
  let worker: INestApplicationContext | undefined;

  afterEach(async () => {
    await worker?.close();
    await api?.close();
    worker = api = undefined;
  });

  it('the api answers its health check and enqueues, and the worker host completes the job, over TLS', async () => {
    api = await startApi(tlsEnvironment());
    const health = await fetch(`${api.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    // What the files held, and the name, are what the api's connection was given.
    const client = api.app.get(RedisConnections).client as Redis;
    expect(client.options.tls).toMatchObject({
      ca: certificates.ca.cert,
      cert: certificates.client.cert,
      key: certificates.client.key,
      servername: SERVERNAME,
    });

    const enqueued = await fetch(`${api.url}/queues/demo/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'echo', data: { over: 'tls' } }),
    });
    expect(enqueued.status).toBe(201);
    const { id } = (await enqueued.json()) as { id: string };
    expect(await admin.exists(`emq:{demo}:job:${id}`)).toBe(1);

    const config = readWorkerConfig({ ...tlsEnvironment(), EMQ_SHUTDOWN_GRACE_MS: '300' });
    expect(config.redisTls).toEqual({
      ca: certificates.ca.cert,
      cert: certificates.client.cert,
      key: certificates.client.key,
      servername: SERVERNAME,
    });
    worker = await NestFactory.createApplicationContext(WorkerModule.forConfig(config), { logger: false });
    await worker.init();
    let view: { state?: string; result?: unknown } = {};
    await waitUntil(async () => {
      view = (await (await fetch(`${api!.url}/queues/demo/jobs/${id}`)).json()) as typeof view;
      return view.state === 'completed';
    }, 'the worker host to complete the job');
    expect(view.result).toEqual({ over: 'tls' });
  });
});

describe('a bad EMQ_REDIS_TLS_* setting stops the boot, naming the variable', () => {
  const notPem = (): string => {
    const path = join(certificates.dir, 'not-pem.txt');
    writeFileSync(path, 'not a certificate\n');
    return path;
  };
  const cases: [string, () => Record<string, string>, RegExp][] = [
    [
      'a file that does not exist',
      () => ({ EMQ_REDIS_TLS_CA_FILE: join(certificates.dir, 'missing.crt') }),
      /EMQ_REDIS_TLS_CA_FILE must name a readable PEM file \(got ".*missing\.crt": ENOENT\)/,
    ],
    [
      'a folder',
      () => ({
        EMQ_REDIS_TLS_CERT_FILE: certificates.dir,
        EMQ_REDIS_TLS_KEY_FILE: certificates.client.keyFile,
      }),
      /EMQ_REDIS_TLS_CERT_FILE must name a readable PEM file \(got ".*": EISDIR\)/,
    ],
    [
      'a file that is not PEM',
      () => ({ EMQ_REDIS_TLS_CA_FILE: notPem() }),
      /EMQ_REDIS_TLS_CA_FILE must name a PEM file \(".*not-pem\.txt" has no -----BEGIN line\)/,
    ],
    [
      'a certificate without its key',
      () => ({ EMQ_REDIS_TLS_CERT_FILE: certificates.client.certFile }),
      /EMQ_REDIS_TLS_KEY_FILE must be set with EMQ_REDIS_TLS_CERT_FILE/,
    ],
    [
      'a server name that is not a host name',
      () => ({ EMQ_REDIS_TLS_SERVERNAME: 'not a name' }),
      /EMQ_REDIS_TLS_SERVERNAME must be a host name \(got "not a name"\)/,
    ],
    [
      'a redis:// URL, which would ignore them',
      () => ({
        REDIS_URL: 'redis://app:s3cret@127.0.0.1:6390',
        EMQ_REDIS_TLS_CA_FILE: certificates.ca.certFile,
      }),
      /EMQ_REDIS_TLS_CA_FILE needs a rediss:\/\/ REDIS_URL/,
    ],
  ];

  it.each(cases)('the api: %s', async (_name, env, message) => {
    const boot = startApi({ REDIS_URL: server.url, ...env() });
    await expect(boot).rejects.toThrow(message);
    await expect(boot).rejects.not.toThrow(/s3cret/);
  });

  it.each(cases)('the worker host: %s', (_name, env, message) => {
    expect(() => readWorkerConfig({ REDIS_URL: server.url, ...env() })).toThrow(message);
  });
});
