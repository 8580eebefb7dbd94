import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { InvalidArgumentError } from '../errors';
import type { EchoMqModuleOptions } from '../module/echomq-options';
import { TestRedisError } from './errors';
import { RedisProcess } from './redis-process';

const DEFAULT_READY_TIMEOUT_MS = 10_000;
const TIMER_MAX_MS = 2_147_483_647;
const SCAN_COUNT = 1_000;

export interface StartRedisOptions {
  /**
   * A Redis server to use instead of starting one (a single server, not a cluster).
   * Default: the REDIS_URL environment variable when it is set. `false` always starts a
   * throwaway server, whatever REDIS_URL says.
   */
  readonly url?: string | false;
  /** The redis-server executable to start. Default `redis-server`, from PATH. */
  readonly command?: string;
  /** How long the server may take to answer its first PING: 1 to 2,147,483,647 ms. Default 10,000 ms. */
  readonly readyTimeoutMs?: number;
}

/** What an application needs to use a TestRedis: its connection and, on a shared server, its key prefix. */
export type TestRedisModuleOptions = Pick<EchoMqModuleOptions, 'connection' | 'keyPrefix'>;

/**
 * The Redis a test suite runs against. Either a throwaway redis-server this handle
 * started (on a free 127.0.0.1 port, keeping no data), or a server given by REDIS_URL,
 * shared with whatever else uses it: then the handle hands out a key prefix no one else
 * uses, so the suite's keys stay apart, and stop() deletes them. stop() never stops a
 * server it did not start.
 */
export class TestRedis {
  private stopped?: Promise<void>;

  private constructor(
    readonly url: string,
    /** The prefix to give EchoMqModule on a shared server (see moduleOptions); undefined on a server of its own. */
    readonly keyPrefix: string | undefined,
    private readonly server: RedisProcess | undefined,
  ) {}

  /** Starts a throwaway redis-server, or uses REDIS_URL's (see StartRedisOptions.url). */
  static async start(options: StartRedisOptions = {}): Promise<TestRedis> {
    const { url, command, readyTimeoutMs } = checkOptions(options);
    if (url !== undefined) {
      await assertAnswers(url, readyTimeoutMs);
      return new TestRedis(url, `emqt-${randomBytes(5).toString('hex')}`, undefined);
    }
    const server = await RedisProcess.start(command, readyTimeoutMs);
    return new TestRedis(`redis://127.0.0.1:${server.port}`, undefined, server);
  }

  /** Whether this handle started the server (and stop() ends it). */
  get ownsServer(): boolean {
    return this.server !== undefined;
  }

  /** The port of the server this handle started; undefined on a shared server. */
  get port(): number | undefined {
    return this.server?.port;
  }

  /** The process id of the server this handle started; undefined on a shared server. */
  get pid(): number | undefined {
    return this.server?.pid;
  }

  /** Spread into EchoMqModule.forRoot: `{ ...redis.moduleOptions, startProcessors: false }`. */
  get moduleOptions(): TestRedisModuleOptions {
    return {
      connection: { url: this.url },
      ...(this.keyPrefix === undefined ? {} : { keyPrefix: this.keyPrefix }),
    };
  }

  /**
   * Stops the server this handle started, or, on a shared server, deletes every key under
   * this handle's prefix. Close the applications first: one still running would write
   * keys again. Calling it again does nothing more.
   */
  stop(): Promise<void> {
    this.stopped ??= this.server ? this.server.stop() : this.deleteKeys();
    return this.stopped;
  }

  private async deleteKeys(): Promise<void> {
    const redis = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined); // a failure rejects the command below, with its reason
    try {
      await redis.connect();
      // The prefix ends at its colon, so `emqt-ab:*` never matches another handle's `emqt-abc:` keys.
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${this.keyPrefix}:*`, 'COUNT', SCAN_COUNT);
        if (keys.length > 0) await redis.unlink(...keys);
        cursor = next;
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  }
}

/** Starts a throwaway redis-server, or uses REDIS_URL's: see TestRedis. */
export function startRedis(options?: StartRedisOptions): Promise<TestRedis> {
  return TestRedis.start(options);
}

function checkOptions(options: StartRedisOptions): {
  url: string | undefined;
  command: string;
  readyTimeoutMs: number;
} {
  const { url, command = 'redis-server', readyTimeoutMs = DEFAULT_READY_TIMEOUT_MS } = options;
  if (url !== undefined && url !== false && (typeof url !== 'string' || url.trim() === '')) {
    throw new InvalidArgumentError('startRedis: url must be a non-empty string, or false to start a server');
  }
  if (typeof command !== 'string' || command === '') {
    throw new InvalidArgumentError('startRedis: command must be a non-empty string');
  }
  if (!Number.isSafeInteger(readyTimeoutMs) || readyTimeoutMs < 1 || readyTimeoutMs > TIMER_MAX_MS) {
    throw new InvalidArgumentError(`startRedis: readyTimeoutMs must be an integer from 1 to ${TIMER_MAX_MS}`);
  }
  const fromEnv = process.env.REDIS_URL?.trim() ? process.env.REDIS_URL : undefined;
  return { url: url === false ? undefined : (url ?? fromEnv), command, readyTimeoutMs };
}

/** One PING on a connection that does not retry: a wrong REDIS_URL fails at once, with its address. */
async function assertAnswers(url: string, timeoutMs: number): Promise<void> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new TestRedisError(`The Redis at ${redacted(url)} does not answer: ${(error as Error).message}`);
  } finally {
    redis.disconnect();
  }
}

/** The url without its password, for messages. */
function redacted(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}
