import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { RedisUnavailableError } from '@app/echomq';
import { DeadlineRedis } from '@app/echomq/connection/deadline-redis';

const ROOT = join(__dirname, '..', '..');
const HARNESS = join(__dirname, 'support', 'exit-harness.ts');

/** A loopback server that accepts every connection and closes it at once (a proxy with no backend). */
async function acceptAndClose(): Promise<{ server: Server; url: string }> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, url: `redis://127.0.0.1:${address.port}` };
}

/**
 * A connection being closed must not wait for Redis any more: against an endpoint that accepts
 * and drops every socket, ioredis reconnects, and its ready check on that reconnect used to be
 * held for the whole command deadline after shutdown, keeping the process alive that long.
 */
describe('closing while Redis accepts and drops connections', () => {
  let server: Server;
  let url: string;

  beforeAll(async () => ({ server, url } = await acceptAndClose()));

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('refuses every command that would wait once failHeld ran, instead of holding it for its deadline', async () => {
    // A ten-minute deadline: a command held for it would outlive the test's own timeout.
    const redis = new DeadlineRedis(url, { retryStrategy: () => 10, maxRetriesPerRequest: null }, 600_000);
    redis.on('error', () => undefined);
    try {
      const held = redis.get('before');
      redis.failHeld();
      await expect(held).rejects.toBeInstanceOf(RedisUnavailableError);
      await expect(redis.get('after')).rejects.toBeInstanceOf(RedisUnavailableError);
      await expect(redis.info()).rejects.toBeInstanceOf(RedisUnavailableError);
    } finally {
      redis.disconnect();
    }
  });

  it('the emq process exits once it reported REDIS_UNAVAILABLE: nothing keeps it alive afterwards', async () => {
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['-r', 'ts-node/register/transpile-only', HARNESS, '--url', url, '--timeout', '6000', 'stats'],
        {
          cwd: ROOT,
          env: { ...process.env, TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'), EMQ_LINGER_MARK_MS: '3000' },
          timeout: 50_000,
        },
        (error, stdout, stderr) => {
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
        },
      );
    });
    expect(result.stderr).toMatch(
      /^emq: REDIS_UNAVAILABLE: Redis at 127\.0\.0\.1:\d+ was not reachable within 6000 ms/,
    );
    expect(result.stdout).not.toContain('LINGERED');
    expect(result.code).toBe(1);
  }, 60_000);
});
