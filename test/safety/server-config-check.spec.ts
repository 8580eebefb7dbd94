import type { INestApplication } from '@nestjs/common';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { EvictionPolicyError, QueueService, type Job } from '@app/echomq';
import {
  ServerConfigCheck,
  describeMaxmemory,
  describePersistence,
  parseConfigReplies,
} from '@app/echomq/connection/server-config-check';
import { queueKeys, RedisConnections } from '@app/echomq/internal';
import { CapturedLog } from '../support/captured-log';
import { uniqueQueue } from '../support/redis';
import { freePort, RedisServer } from '../support/redis-server';
import { closeAll, processorClass, waitUntil } from '../worker/fixtures/support';
import { bootLogged } from './support/apps';

/** A logger that keeps what it is told, by level. */
function recordingLogger() {
  const lines = { log: [] as string[], warn: [] as string[], error: [] as string[] };
  return {
    lines,
    logger: {
      log: (message: string) => void lines.log.push(message),
      warn: (message: string) => void lines.warn.push(message),
      error: (message: string) => void lines.error.push(message),
    },
  };
}

/** A new connection of the same client (a reconnect), and the check it runs on 'ready'. */
async function reconnect(client: Redis, check: ServerConfigCheck): Promise<void> {
  client.disconnect(true);
  await once(client, 'ready');
  await check.verified().catch(() => undefined);
}

describe('reading the server settings', () => {
  it('takes each setting from its CONFIG GET reply', () => {
    expect(
      parseConfigReplies([
        ['maxmemory-policy', 'allkeys-lru'],
        ['maxmemory', '4194304'],
        ['appendonly', 'no'],
        [],
        ['save', '3600 1 300 100'],
      ]),
    ).toEqual({
      'maxmemory-policy': 'allkeys-lru',
      maxmemory: '4194304',
      appendonly: 'no',
      save: '3600 1 300 100',
    });
  });

  it('names what survives a restart of Redis, and when nothing does', () => {
    expect(describePersistence({ appendonly: 'no', save: '' })).toEqual({
      none: true,
      text: 'appendonly no and no RDB save rules',
    });
    expect(describePersistence({ appendonly: 'yes', appendfsync: 'everysec', save: '' })).toEqual({
      none: false,
      text: 'AOF (appendfsync everysec)',
    });
    expect(describePersistence({ appendonly: 'yes', appendfsync: 'always', save: '60 1' }).text).toBe(
      'AOF (appendfsync always) and RDB snapshots (save 60 1)',
    );
    expect(describePersistence({ appendonly: 'no', save: '3600 1' })).toEqual({
      none: false,
      text: 'RDB snapshots (save 3600 1)',
    });
  });

  it('says maxmemory as an operator reads it', () => {
    expect(describeMaxmemory('0')).toBe('no limit');
    expect(describeMaxmemory('4194304')).toBe('4.0 MB');
    expect(describeMaxmemory('2147483648')).toBe('2.0 GB');
  });
});

describe('the server settings check', () => {
  const servers: RedisServer[] = [];
  const clients: Redis[] = [];
  const apps: INestApplication[] = [];

  async function server(args: string[] = []): Promise<RedisServer> {
    const started = await RedisServer.start({ args });
    servers.push(started);
    return started;
  }
  function client(url: string): Redis {
    const made = new Redis(url);
    clients.push(made);
    return made;
  }

  afterEach(async () => {
    await closeAll(apps.splice(0));
    for (const made of clients.splice(0)) made.disconnect();
    for (const started of servers.splice(0)) await started.destroy();
  });

  it('passes a noeviction Redis, and warns once, not per reconnect, that it persists nothing', async () => {
    const redis = client((await server()).url);
    const { logger, lines } = recordingLogger();
    const check = new ServerConfigCheck(redis, logger, { said: new Map() });
    await expect(check.verified()).resolves.toBeUndefined();
    await reconnect(redis, check);
    expect(lines.error).toEqual([]);
    expect(lines.warn).toHaveLength(1);
    expect(lines.warn[0]).toMatch(
      /^Redis at 127\.0\.0\.1:\d+ persists nothing \(appendonly no and no RDB save rules\): a restart of Redis loses every job\./,
    );
  });

  it('logs the persistence it finds', async () => {
    const found = await server(['--appendonly', 'yes', '--appendfsync', 'always', '--save', '60 1']);
    const { logger, lines } = recordingLogger();
    await new ServerConfigCheck(client(found.url), logger, { said: new Map() }).verified();
    expect(lines).toEqual({
      log: [
        `Redis at 127.0.0.1:${found.port} persists with AOF (appendfsync always) and RDB snapshots (save 60 1); ` +
          'maxmemory no limit, maxmemory-policy noeviction',
      ],
      warn: [],
      error: [],
    });
  });

  it('says an evicting policy in one error line per finding, not per reconnect, and serves on', async () => {
    const evicting = await server(['--maxmemory-policy', 'allkeys-lru', '--maxmemory', '64mb']);
    const redis = client(evicting.url);
    const { logger, lines } = recordingLogger();
    const check = new ServerConfigCheck(redis, logger, { said: new Map() });
    await expect(check.verified()).resolves.toBeUndefined();
    await reconnect(redis, check);
    expect(lines.error).toHaveLength(1);
    expect(lines.error[0]).toMatch(
      new RegExp(
        `^Redis at 127\\.0\\.0\\.1:${evicting.port} has maxmemory-policy allkeys-lru \\(maxmemory 64\\.0 MB\\): ` +
          'once full it evicts keys, .* Set maxmemory-policy noeviction',
      ),
    );
    // Changed at runtime: said again once a connection reads it; a change back to noeviction is quiet.
    await redis.config('SET', 'maxmemory-policy', 'volatile-ttl');
    await reconnect(redis, check);
    await redis.config('SET', 'maxmemory-policy', 'noeviction');
    await reconnect(redis, check);
    expect(lines.error).toHaveLength(2);
    expect(lines.error[1]).toContain('has maxmemory-policy volatile-ttl');
    await redis.config('SET', 'maxmemory-policy', 'allkeys-lru');
    await reconnect(redis, check);
    expect(lines.error).toHaveLength(3);
  });

  it('with requireNoEviction, refuses an evicting Redis: enqueue writes nothing and a worker does not boot', async () => {
    const evicting = await server(['--maxmemory-policy', 'volatile-lru']);
    const admin = client(evicting.url);
    const queue = uniqueQueue('evicting');
    const options = { connection: { url: evicting.url }, requireNoEviction: true, nodeId: 61 };
    const log = new CapturedLog();
    const producer = await bootLogged(apps, log, options);

    const refused: unknown = await producer
      .get(QueueService)
      .enqueue(queue, 'never written')
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(EvictionPolicyError);
    expect(refused).toMatchObject({
      code: 'REDIS_EVICTION_POLICY',
      policy: 'volatile-lru',
      target: `127.0.0.1:${evicting.port}`,
    });
    expect(await admin.dbsize()).toBe(0);
    // Said at connect, about the server: what is refused, and what lifts it (no word of a write).
    const errors = log.matching((line) => line.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0].message).toMatch(
      new RegExp(
        `^Redis at 127\\.0\\.0\\.1:${evicting.port} has maxmemory-policy volatile-lru \\(maxmemory no limit\\): ` +
          'it may evict jobs\\. requireNoEviction is on: enqueue is refused \\(REDIS_EVICTION_POLICY\\) until its ' +
          'policy is noeviction \\(checked again every 10 s while refused\\)',
      ),
    );
    expect(errors[0].message).not.toMatch(/nothing was written/);

    const Worker = processorClass(queue, {}, () => 'ran');
    const boot = bootLogged(apps, new CapturedLog(), options, [Worker]);
    await expect(boot).rejects.toBeInstanceOf(EvictionPolicyError);
    expect(await admin.dbsize()).toBe(0);
  });

  it('with requireNoEviction, a reconnect to a Redis that now evicts refuses it, in one error line', async () => {
    const redis = client((await server()).url);
    const { logger, lines } = recordingLogger();
    const check = new ServerConfigCheck(redis, logger, { requireNoEviction: true, said: new Map() });
    await expect(check.verified()).resolves.toBeUndefined();
    expect(check.refused).toBe(false);

    // A failover to a replica configured otherwise looks the same: the next connection evicts.
    await redis.config('SET', 'maxmemory-policy', 'allkeys-lru');
    await reconnect(redis, check);

    expect(check.refused).toBe(true);
    await expect(check.verified()).rejects.toBeInstanceOf(EvictionPolicyError);
    expect(lines.error).toEqual([
      expect.stringMatching(/has maxmemory-policy allkeys-lru .*requireNoEviction is on/),
    ]);
  });

  it('with requireNoEviction, lifts a refusal once the policy is fixed, without a new connection', async () => {
    const redis = client((await server(['--maxmemory-policy', 'allkeys-lru'])).url);
    const { logger, lines } = recordingLogger();
    const check = new ServerConfigCheck(redis, logger, {
      requireNoEviction: true,
      said: new Map(),
      recheckRefusedMs: 100,
    });
    await expect(check.verified()).rejects.toBeInstanceOf(EvictionPolicyError);
    const connection = await redis.client('ID');

    await redis.config('SET', 'maxmemory-policy', 'noeviction');
    await waitUntil(
      () =>
        check.verified().then(
          () => true,
          () => false,
        ),
      'the refusal to be lifted',
    );

    expect(check.refused).toBe(false);
    expect(await redis.client('ID')).toBe(connection);
    expect(lines.log).toContainEqual(
      expect.stringMatching(
        /has maxmemory-policy noeviction now \(it had allkeys-lru\): requireNoEviction no longer refuses it/,
      ),
    );
  });

  it('CONFIG renamed away: one warning, the checks skipped, and nothing refused even with requireNoEviction', async () => {
    const managed = await server(['--rename-command', 'CONFIG', '']);
    const redis = client(managed.url);
    const { logger, lines } = recordingLogger();
    const check = new ServerConfigCheck(redis, logger, { requireNoEviction: true, said: new Map() });
    await expect(check.verified()).resolves.toBeUndefined();
    await reconnect(redis, check);
    expect(lines.log).toEqual([]);
    expect(lines.error).toEqual([]);
    expect(lines.warn).toHaveLength(1);
    expect(lines.warn[0]).toMatch(
      /refuses CONFIG GET \(ERR unknown command .*\): the maxmemory-policy and persistence checks are skipped, and requireNoEviction cannot be enforced\. Make sure its maxmemory-policy is noeviction/,
    );

    const queue = uniqueQueue('no-config');
    const ran = new Set<string>();
    const Worker = processorClass(queue, {}, (job: Job) => void ran.add(job.id));
    const app = await bootLogged(
      apps,
      new CapturedLog(),
      { connection: { url: managed.url }, requireNoEviction: true, nodeId: 62 },
      [Worker],
    );
    const id = await app.get(QueueService).enqueue(queue, 'served');
    await waitUntil(() => ran.has(id), 'the job served without CONFIG');
  });

  it('CONFIG refused by an ACL (NOPERM): one warning, and the checks skipped', async () => {
    const guarded = await server();
    await client(guarded.url).call('ACL', 'SETUSER', 'app', 'on', '>pw', '~*', '&*', '+@all', '-config');
    const { logger, lines } = recordingLogger();
    const check = new ServerConfigCheck(client(`redis://app:pw@127.0.0.1:${guarded.port}`), logger, {
      said: new Map(),
    });
    await expect(check.verified()).resolves.toBeUndefined();
    expect(lines.warn).toEqual([
      expect.stringMatching(/refuses CONFIG GET \(NOPERM .*\): the maxmemory-policy/),
    ]);
    expect(lines.error).toEqual([]);
  });

  it('never holds a boot while Redis is down; once Redis is up an evicting one is refused', async () => {
    const port = await freePort();
    const queue = uniqueQueue('down-evicting');
    const Worker = processorClass(queue, {}, () => 'ran');
    const log = new CapturedLog();
    await bootLogged(
      apps,
      log,
      { connection: { url: `redis://127.0.0.1:${port}` }, requireNoEviction: true, commandTimeoutMs: 1_000 },
      [Worker],
    );
    servers.push(await RedisServer.start({ port, args: ['--maxmemory-policy', 'allkeys-random'] }));
    const [refused] = await log.waitFor(
      (line) => line.level === 'error' && line.message.startsWith(`Not serving queue ${queue}:`),
    );
    expect(refused.message).toContain(`Redis at 127.0.0.1:${port} has maxmemory-policy allkeys-random`);
  });

  it('with requireNoEviction, refuses enqueue as soon as a reconnect finds the Redis evicting', async () => {
    const changing = await server();
    const admin = client(changing.url);
    const queue = uniqueQueue('evicting-later');
    const ran = new Set<string>();
    const Worker = processorClass(queue, {}, (job: Job) => void ran.add(job.id));
    const log = new CapturedLog();
    const options = { connection: { url: changing.url }, requireNoEviction: true, nodeId: 63 };
    const app = await bootLogged(apps, log, options, [Worker]);
    const queues = app.get(QueueService);
    const first = await queues.enqueue(queue, 'served');
    await waitUntil(() => ran.has(first), 'the first job served');

    // The next connection finds an evicting Redis (a failover to a replica configured otherwise).
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    const { serverConfig } = app.get(RedisConnections);
    await waitUntil(() => serverConfig.refused, 'the check on the new connection to refuse it');
    expect(log.matching((line) => line.level === 'error')).toEqual([
      expect.objectContaining({
        message: expect.stringMatching(/has maxmemory-policy allkeys-lru .*requireNoEviction is on/),
      }),
    ]);

    const refused: unknown = await queues.enqueue(queue, 'never written').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(EvictionPolicyError);
    expect(await admin.zcard(queueKeys(queue).pending)).toBe(0);
    expect(ran.size).toBe(1);
  });
});
