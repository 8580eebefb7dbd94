import { once } from 'node:events';
import { Redis } from 'ioredis';
import { Processor, QueueService, RedisVersionError, type Job } from '@app/echomq';
import {
  MIN_REDIS_VERSION,
  RedisVersionCheck,
  isOlderVersion,
  parseRedisVersion,
} from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { RedisServer } from '../support/redis-server';

/** A logger that keeps what it is told, so a test can read the one line it expects. */
function recordingLogger() {
  const lines = { debug: [] as string[], error: [] as string[] };
  return {
    lines,
    logger: {
      debug: (message: string) => void lines.debug.push(message),
      error: (message: string) => void lines.error.push(message),
    },
  };
}

describe('the Redis version check', () => {
  it('needs Redis 6.2, the release of ZADD GT and ZRANGE BYLEX REV', () => {
    expect(MIN_REDIS_VERSION).toBe('6.2.0');
  });

  it('reads redis_version from an INFO reply', () => {
    expect(parseRedisVersion('# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:0\r\n')).toBe('7.0.15');
    expect(parseRedisVersion('# Server\r\nredis_mode:standalone\r\n')).toBeUndefined();
  });

  it('compares dotted versions by number, not by text', () => {
    const older: [string, string][] = [
      ['6.0.20', '6.2.0'],
      ['5.0.14', '6.2.0'],
      ['6.1.99', '6.2.0'],
    ];
    const notOlder: [string, string][] = [
      ['6.2.0', '6.2.0'],
      ['6.2', '6.2.0'],
      ['6.10.0', '6.2.0'],
      ['7.0.15', '6.2.0'],
      ['10.0.0', '6.2.0'],
      ['255.255.255', '6.2.0'],
    ];
    for (const [version, minimum] of older) expect(isOlderVersion(version, minimum)).toBe(true);
    for (const [version, minimum] of notOlder) expect(isOlderVersion(version, minimum)).toBe(false);
  });

  describe('against a real server', () => {
    let client: Redis;

    beforeEach(() => {
      client = connect();
    });
    afterEach(() => {
      client.disconnect();
    });

    it('passes this suite’s Redis', async () => {
      const { logger, lines } = recordingLogger();
      await expect(new RedisVersionCheck(client, logger).verified()).resolves.toBeUndefined();
      expect(lines).toEqual({ debug: [], error: [] });
    });

    it('refuses a server older than the minimum, naming both versions, and checks again on each new connection', async () => {
      const { logger, lines } = recordingLogger();
      const check = new RedisVersionCheck(client, logger, '99.0.0');
      const version = parseRedisVersion(await client.info('server'));
      let caught: unknown;
      await check.verified().catch((error: unknown) => (caught = error));
      expect(caught).toBeInstanceOf(RedisVersionError);
      expect((caught as RedisVersionError).code).toBe('REDIS_VERSION_UNSUPPORTED');
      expect((caught as RedisVersionError).version).toBe(version);
      expect((caught as Error).message).toMatch(
        new RegExp(`^Redis at 127\\.0\\.0\\.1:\\d+ is version ${version}; EchoMQ needs 99\\.0\\.0 or newer`),
      );
      expect(lines.error).toHaveLength(1);
      // The refusal stands for this connection; a new one may reach another server: checked again.
      await expect(check.verified()).rejects.toBe(caught);
      client.disconnect(true);
      await once(client, 'ready');
      await expect(check.verified()).rejects.toBeInstanceOf(RedisVersionError);
      expect(lines.error).toHaveLength(2);
    });
  });

  describe('on a server without INFO (renamed away, as some managed services do)', () => {
    let server: RedisServer;
    const queue = uniqueQueue('no-info');

    @Processor(queue)
    class Echo {
      process(job: Job<string>) {
        return job.data;
      }
    }

    beforeAll(async () => {
      server = await RedisServer.start({ args: ['--rename-command', 'INFO', `INFO-${Date.now()}`] });
    });
    afterAll(async () => {
      await server.destroy();
    });

    it('is skipped with one debug line', async () => {
      const client = new Redis(server.url, { enableReadyCheck: false });
      try {
        const { logger, lines } = recordingLogger();
        await expect(new RedisVersionCheck(client, logger).verified()).resolves.toBeUndefined();
        expect(lines.error).toEqual([]);
        expect(lines.debug).toHaveLength(1);
        expect(lines.debug[0]).toMatch(/refuses INFO .*unknown command.*; version check skipped$/);
      } finally {
        client.disconnect();
      }
    });

    it('still boots a worker that serves its queue (with ioredis’s ready check off)', async () => {
      const app = await bootApp([Echo], {
        connection: { url: server.url, enableReadyCheck: false },
        nodeId: 21,
      });
      try {
        const queues = app.get(QueueService);
        const id = await queues.enqueue(queue, 'served');
        await expect(queues.waitFor(queue, id, 10_000)).resolves.toBe('served');
      } finally {
        await app.close();
      }
    });
  });
});
