import { randomBytes } from 'node:crypto';
import { RedisServer, freePort } from '../../support/redis-server';
import { AppProcess } from './app-process';
import { API_MAIN, WORKER_MAIN } from './build-apps';

/** How often the api samples the overview for the page; short, so the tests wait little. */
export const REFRESH_MS = 400;

export interface RunningApps {
  /** The api's base URL, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  /** EMQ_API_TOKEN of the api; '' when it has none. */
  readonly token: string;
  /** A call to the api with the bearer token, as a script or a producer would make it. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** POST /queues/:queue/jobs; the new job's id (a refusal throws). */
  enqueue(queue: string, job: Record<string, unknown>): Promise<string>;
  stop(): Promise<void>;
}

export interface AppsOptions {
  /** Give the api an EMQ_API_TOKEN (default true). */
  readonly token?: boolean;
  /** Start the worker, which serves the demo queue (default true). */
  readonly worker?: boolean;
}

/**
 * The apps as they run in production: a redis-server of the suite's own, the built api (with a
 * token, unless told otherwise) and the built worker (which serves the demo queue), each a real
 * process, talking only through Redis, reached over real HTTP.
 */
export async function startApps(options: AppsOptions = {}): Promise<RunningApps> {
  const redis = await RedisServer.start();
  const token = options.token === false ? '' : randomBytes(18).toString('base64url');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const api = AppProcess.start('api', API_MAIN, {
    REDIS_URL: redis.url,
    PORT: String(port),
    HOST: '127.0.0.1',
    ...(token === '' ? {} : { EMQ_API_TOKEN: token }),
    EMQ_DASHBOARD_REFRESH_MS: String(REFRESH_MS),
    EMQ_THROTTLE_LIMIT: '0',
  });
  const worker =
    options.worker === false
      ? undefined
      : AppProcess.start('worker', WORKER_MAIN, {
          REDIS_URL: redis.url,
          EMQ_DEMO_CONCURRENCY: '4',
          EMQ_SHUTDOWN_GRACE_MS: '500',
          EMQ_LOG_FORMAT: 'text',
        });
  const stop = async (): Promise<void> => {
    await Promise.all([api.stop(), worker?.stop()]);
    await redis.destroy();
  };
  try {
    await Promise.all([api.waitForOutput('Listening on'), worker?.waitForOutput('Worker started')]);
  } catch (error) {
    await stop();
    throw error;
  }

  const call = async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(token === '' ? {} : { authorization: `Bearer ${token}` }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  const enqueue = async (queue: string, job: Record<string, unknown>): Promise<string> => {
    const answer = await call('POST', `/queues/${queue}/jobs`, job);
    if (answer.status !== 201)
      throw new Error(`enqueue answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    return answer.body.id as string;
  };

  return {
    url,
    token,
    call,
    enqueue,
    stop,
  };
}
