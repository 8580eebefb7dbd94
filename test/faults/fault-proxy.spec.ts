import { randomBytes } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { FaultProxy } from '../support/fault-proxy';

/**
 * The fault proxy itself, in front of the suite's real redis-server, seen through a plain ioredis
 * client. Every fault is checked from both ends: what the client saw, and (through a direct
 * connection that bypasses the proxy) what the server did.
 */
// Not ../support/redis: that imports the library, and the proxy's spec should not depend on it.
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const uniqueKey = (prefix: string): string => `fault-proxy:${prefix}:${randomBytes(6).toString('hex')}`;
let proxy: FaultProxy;
let direct: Redis;
const clients: Redis[] = [];

/** A client through the proxy, ready. Its errors are expected here, and listened to so ioredis
 * does not print them. */
async function client(options: RedisOptions = {}): Promise<Redis> {
  const redis = new Redis(proxy.url, { maxRetriesPerRequest: 1, commandTimeout: 200, ...options });
  redis.on('error', () => undefined);
  clients.push(redis);
  if (options.lazyConnect !== true) await event(redis, 'ready');
  return redis;
}

/** Resolves on the next `name` event. Unlike events.once, an 'error' meanwhile does not reject it. */
function event(emitter: Redis | FaultProxy, name: string): Promise<unknown[]> {
  return new Promise((resolve) => emitter.once(name as 'connection', (...args: unknown[]) => resolve(args)));
}

/** Resolves on the client's next error with that code (ECONNRESET, ECONNREFUSED, ...). */
function nextError(redis: Redis, code: string): Promise<void> {
  return new Promise((resolve) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      if (error.code !== code) return;
      redis.off('error', onError);
      resolve();
    };
    redis.on('error', onError);
  });
}

beforeAll(() => {
  direct = new Redis(redisUrl);
});

afterAll(() => {
  direct.disconnect();
});

beforeEach(async () => {
  const target = new URL(redisUrl);
  proxy = await FaultProxy.start({ target: { host: target.hostname, port: Number(target.port) } });
});

afterEach(async () => {
  for (const redis of clients.splice(0)) redis.disconnect();
  await proxy.stop();
});

describe('the fault proxy', () => {
  it('forwards commands and replies both ways, and counts them', async () => {
    const key = uniqueKey('fwd');
    const redis = await client();
    await expect(redis.set(key, 'v')).resolves.toBe('OK');
    await expect(redis.get(key)).resolves.toBe('v');
    await expect(direct.get(key)).resolves.toBe('v');
    expect(proxy.url).toBe(`redis://127.0.0.1:${proxy.port}`);
    expect(proxy.stats).toMatchObject({ accepted: 1, open: 1, refused: 0, repliesDropped: 0 });
    expect(proxy.stats.bytesToServer).toBeGreaterThan(0);
    expect(proxy.stats.bytesToClient).toBeGreaterThan(0);
  });

  it('loses a reply: the command ran, the client got nothing, and its connection stays deaf', async () => {
    const key = uniqueKey('lost');
    const redis = await client();
    const dropped = event(proxy, 'replyDropped');
    proxy.loseReplies(1);
    await expect(redis.set(key, 'v')).rejects.toThrow('Command timed out');
    await expect(dropped).resolves.toEqual([['set', key, 'v'], 1]);
    await expect(direct.get(key)).resolves.toBe('v');
    // Later requests on that connection still run, but no reply comes back on it any more.
    await expect(redis.incr(`${key}:n`)).rejects.toThrow('Command timed out');
    await expect(direct.get(`${key}:n`)).resolves.toBe('1');
    expect(proxy.stats.repliesDropped).toBe(2);
    // The rule is spent: a new connection gets its replies.
    await expect((await client()).get(key)).resolves.toBe('v');
  });

  it('loses every reply while the mode is on, until heal()', async () => {
    const key = uniqueKey('all');
    const [first, second] = [await client(), await client()];
    proxy.loseReplies();
    await expect(first.incr(key)).rejects.toThrow('Command timed out');
    await expect(second.incr(key)).rejects.toThrow('Command timed out');
    await proxy.heal();
    await expect((await client()).incr(key)).resolves.toBe(3);
    expect(proxy.stats.repliesDropped).toBe(2);
  });

  it('loses only the reply to the matching request, even among pipelined ones', async () => {
    const key = uniqueKey('match');
    // Auto-pipelining writes the three commands in one chunk, so replies arrive coalesced.
    const redis = await client({ enableAutoPipelining: true });
    redis.defineCommand('setThrough', { numberOfKeys: 1, lua: "return redis.call('SET', KEYS[1], ARGV[1])" });
    const run = (redis as unknown as { setThrough(k: string, v: string): Promise<string> }).setThrough;
    await expect(run.call(redis, key, 'warm')).resolves.toBe('OK'); // loads the script: EVALSHA from now on
    proxy.loseRepliesWhile('evalsha', { count: 1 });
    const [before, script, after] = await Promise.allSettled([
      redis.ping(),
      run.call(redis, key, 'v'),
      redis.get(key),
    ]);
    // The reply before the lost one arrives; the lost one and those after it do not, yet all ran.
    expect(before).toEqual({ status: 'fulfilled', value: 'PONG' });
    expect(script).toMatchObject({ status: 'rejected', reason: { message: 'Command timed out' } });
    expect(after).toMatchObject({ status: 'rejected', reason: { message: 'Command timed out' } });
    await expect(direct.get(key)).resolves.toBe('v');
    expect(proxy.stats.repliesDropped).toBe(2);
  });

  it('matches requests by a predicate over the decoded command', async () => {
    const [key, other] = [uniqueKey('pred'), uniqueKey('pred')];
    const redis = await client();
    proxy.loseRepliesWhile((command) => command[0] === 'set' && command[1] === key);
    await expect(redis.set(other, '1')).resolves.toBe('OK');
    await expect(redis.set(key, '1')).rejects.toThrow('Command timed out');
  });

  it('loses a reply then closes: ioredis resends, so the command runs twice', async () => {
    const key = uniqueKey('resend');
    const redis = await client({ commandTimeout: 5_000 });
    const closed = event(redis, 'close');
    proxy.loseNextReplyThenClose('incr');
    // The first INCR ran, its reply was lost with the connection, and the resend ran it again.
    await expect(redis.incr(key)).resolves.toBe(2);
    await closed;
    await expect(direct.get(key)).resolves.toBe('2');
    expect(proxy.stats).toMatchObject({ accepted: 2, repliesDropped: 1 });
  });

  it('silences sockets: a command hangs until the client times out, and never reaches the server', async () => {
    const key = uniqueKey('silent');
    const redis = await client();
    let closed = false;
    redis.on('close', () => (closed = true));
    proxy.silence();
    await expect(redis.set(key, 'v')).rejects.toThrow('Command timed out');
    await expect(direct.exists(key)).resolves.toBe(0);
    expect(closed).toBe(false);
    expect(proxy.stats.open).toBe(1);

    // New connections are silenced too until heal(): accepted, but never ready.
    const late = await client({ lazyConnect: true });
    const accepted = event(proxy, 'connection');
    void late.connect().catch(() => undefined);
    await accepted;
    await expect(late.ping()).rejects.toThrow('Command timed out');
    expect(late.status).not.toBe('ready');

    await proxy.heal();
    await expect((await client()).set(key, 'healed')).resolves.toBe('OK');
    // A silenced socket stays dead after heal(), as a half-open one would.
    await expect(redis.get(key)).rejects.toThrow('Command timed out');
  });

  it('silences only current connections when asked', async () => {
    const redis = await client();
    proxy.silence({ newConnections: false });
    await expect(redis.ping()).rejects.toThrow('Command timed out');
    await expect((await client()).ping()).resolves.toBe('PONG');
  });

  it('closeAll resets every connection: the client sees it close, then reconnects', async () => {
    const redis = await client();
    const silenced = await client();
    proxy.silence({ newConnections: false });
    const reset = nextError(redis, 'ECONNRESET');
    const closed = event(redis, 'close');
    const silencedClosed = event(silenced, 'close');
    const reconnected = event(redis, 'ready');
    proxy.closeAll();
    await Promise.all([reset, closed, silencedClosed]);
    await reconnected;
    await expect(redis.ping()).resolves.toBe('PONG');
  });

  it.each(['unlisten', 'reset'] as const)('refuseNew(true, %s) keeps reconnects failing', async (how) => {
    const redis = await client({ retryStrategy: () => 10 });
    await proxy.refuseNew(true, how);
    const codes: (string | undefined)[] = [];
    redis.on('error', (error: NodeJS.ErrnoException) => codes.push(error.code));
    // The first 'reconnecting' follows closeAll; each later one follows a refused attempt.
    const thirdReconnect = new Promise<void>((resolve) => {
      let reconnects = 0;
      redis.on('reconnecting', () => ++reconnects === 3 && resolve());
    });
    proxy.closeAll();
    await thirdReconnect;
    expect(redis.status).not.toBe('ready');
    expect(codes).toContain(how === 'unlisten' ? 'ECONNREFUSED' : 'ECONNRESET');
    expect(proxy.stats.refused).toBe(how === 'reset' ? proxy.stats.accepted - 1 : 0);
    if (how === 'reset') expect(proxy.stats.refused).toBeGreaterThanOrEqual(2);
    const ready = event(redis, 'ready');
    await proxy.refuseNew(false);
    await ready;
    await expect(redis.ping()).resolves.toBe('PONG');
  });

  it('stop() closes every connection and the listener, and can be called twice', async () => {
    const redis = await client({ retryStrategy: () => 10 });
    const closed = event(redis, 'close');
    await proxy.stop();
    await proxy.stop();
    await closed;
    await nextError(redis, 'ECONNREFUSED');
  });
});
