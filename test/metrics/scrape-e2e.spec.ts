import { randomBytes } from 'node:crypto';
import { DEMO_QUEUE } from '../../apps/worker/src/demo.processor';
import { startApi, type RunningApi } from '../api/support/api';
import { redisUrl } from '../support/redis';
import { freePort } from '../support/redis-server';
import { eventually } from './support/eventually';
import { parseExposition, valueOf, type Exposition } from './support/exposition';
import { WorkerHost } from './support/worker-host';

const TOKEN = `metrics-${randomBytes(8).toString('hex')}`;
const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * The api and the worker host as an operator runs them, on the suite's Redis under a key prefix
 * of their own (so the demo queue here is this file's): Prometheus and the probes scrape them
 * over real HTTP, and the exposition text is parsed as a scraper would.
 */
describe('scraping /metrics and /health of the api and the worker host', () => {
  const prefix = `e2e-${randomBytes(4).toString('hex')}`;
  let api: RunningApi;
  let worker: WorkerHost;
  let workerUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    workerUrl = `http://127.0.0.1:${port}`;
    worker = WorkerHost.start({
      REDIS_URL: redisUrl(),
      EMQ_KEY_PREFIX: prefix,
      EMQ_METRICS_PORT: String(port),
      EMQ_METRICS_HOST: '127.0.0.1',
      EMQ_SHUTDOWN_GRACE_MS: '500',
    });
    api = await startApi({
      EMQ_KEY_PREFIX: prefix,
      EMQ_API_TOKEN: TOKEN,
      EMQ_THROTTLE_LIMIT: '2',
    });
    // The worker boots under ts-node: its listener answers once the application is up.
    await eventually(
      () =>
        fetch(`${workerUrl}/health`).then(
          (res) => res.status,
          () => 0,
        ),
      (status) => status === 200 || worker.exited,
      'the worker host answering /health',
      45_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${worker.log}`);
    });
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    // A graceful drain ends on the re-raised SIGTERM, never on the SIGKILL stop() falls back to.
    expect(await worker?.stop()).toEqual({ code: null, signal: 'SIGTERM' });
  });

  const auth = { authorization: `Bearer ${TOKEN}` };

  async function scrape(url: string, headers: Record<string, string> = {}): Promise<Exposition> {
    const res = await fetch(`${url}/metrics`, { headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(PROMETHEUS_TEXT);
    return parseExposition(await res.text());
  }

  it('a job posted to the api and run by the worker shows in both processes', async () => {
    const posted = await fetch(`${api.url}/queues/${DEMO_QUEUE}/jobs`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'echo', data: { hello: 'metrics' } }),
    });
    expect(posted.status).toBe(201);
    const { id } = (await posted.json()) as { id: string };

    // The worker's own runtime: its settlement and handler histogram for the demo queue.
    const local = await eventually(
      () => scrape(workerUrl),
      (now) => valueOf(now, 'echomq_settlements_total', { queue: DEMO_QUEUE, outcome: 'completed' }) === 1,
      `job ${id} settled in the worker`,
    );
    expect(
      valueOf(local, 'echomq_handler_duration_seconds_count', { queue: DEMO_QUEUE, outcome: 'completed' }),
    ).toBe(1);
    expect(valueOf(local, 'echomq_jobs_claimed_total', { queue: DEMO_QUEUE })).toBe(1);
    // Node's process metrics beside them.
    expect(local.types.get('process_cpu_user_seconds_total')).toBe('counter');

    // The api runs no processor: the same Redis counters, none of the runtime series.
    const fromApi = await eventually(
      () => scrape(api.url, auth),
      (now) => valueOf(now, 'echomq_transitions_total', { queue: DEMO_QUEUE, transition: 'completed' }) === 1,
      'the completion counted in Redis, seen by the api',
    );
    expect(valueOf(fromApi, 'echomq_transitions_total', { queue: DEMO_QUEUE, transition: 'enqueued' })).toBe(
      1,
    );
    expect(valueOf(fromApi, 'echomq_queue_jobs', { queue: DEMO_QUEUE, set: 'pending' })).toBe(0);
    expect(valueOf(fromApi, 'echomq_redis_up')).toBe(1);
    expect(valueOf(fromApi, 'echomq_settlements_total', { queue: DEMO_QUEUE, outcome: 'completed' })).toBe(
      undefined,
    );
    // And the worker reads the same counters from Redis.
    const shared = await eventually(
      () => scrape(workerUrl),
      (now) => valueOf(now, 'echomq_transitions_total', { queue: DEMO_QUEUE, transition: 'completed' }) === 1,
      'the completion counted in Redis, seen by the worker',
    );
    expect(valueOf(shared, 'echomq_queue_jobs', { queue: DEMO_QUEUE, set: 'active' })).toBe(0);
  });

  it("keeps the api's /metrics behind its token and out of its throttle", async () => {
    const refused = await fetch(`${api.url}/metrics`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
    // The limit is 2 requests per window here: a scraper polls on its own schedule, never throttled.
    for (let n = 0; n < 5; n++) await scrape(api.url, auth);
  });

  it("answers the worker's /health with EchoMQ's indicator: Redis and the demo queue's claim loop", async () => {
    const res = await fetch(`${workerUrl}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toMatchObject({
      status: 'ok',
      info: {
        echomq: {
          status: 'up',
          redis: { reachable: true },
          loops: { [DEMO_QUEUE]: { state: 'claiming' } },
        },
      },
    });
  });

  it("answers the api's /health with the same indicator under its `redis` key", async () => {
    const res = await fetch(`${api.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      status: 'ok',
      info: { redis: { status: 'up', redis: { reachable: true }, loops: {} } },
    });
  });

  it('serves nothing else on the worker listener', async () => {
    expect((await fetch(`${workerUrl}/queues`)).status).toBe(404);
    expect((await fetch(`${workerUrl}/metrics`, { method: 'POST' })).status).toBe(405);
  });
});
