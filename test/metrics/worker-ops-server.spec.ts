import { randomBytes } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { QueueService } from '@app/echomq';
import { ProcessorExplorer, RedisConnections } from '@app/echomq/internal';
import { DEMO_QUEUE } from '../../apps/worker/src/demo.processor';
import { OpsServer } from '../../apps/worker/src/ops-server';
import { readWorkerConfig } from '../../apps/worker/src/worker-config';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import { openMonitor } from '../support/monitor';
import { connect, redisUrl } from '../support/redis';
import { RedisServer } from '../support/redis-server';
import { parseExposition, samplesOf, valueOf } from './support/exposition';

/** The worker host's application, in this process, configured from `env` as main.ts does. */
async function bootWorker(
  env: Record<string, string>,
): Promise<{ app: INestApplicationContext; url: string }> {
  const config = readWorkerConfig({
    EMQ_KEY_PREFIX: `ops-${randomBytes(4).toString('hex')}`,
    EMQ_METRICS_PORT: '0',
    EMQ_METRICS_HOST: '127.0.0.1',
    EMQ_SHUTDOWN_GRACE_MS: '200',
    EMQ_DEMO_CONCURRENCY: '2',
    ...env,
  });
  const app = await NestFactory.createApplicationContext(WorkerModule.forConfig(config), {
    logger: ['error'],
  });
  await app.init();
  return { app, url: `http://127.0.0.1:${app.get(OpsServer).port}` };
}

async function health(url: string, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}${path}`);
  return { status: res.status, body: await res.json() };
}

describe("the worker host's listener", () => {
  it('reads EMQ_METRICS_REDIS and EMQ_HEALTH_MAX_HANDLER_MS, refusing bad values by name', () => {
    expect(readWorkerConfig({}).metricsRedis).toBe(true);
    expect(readWorkerConfig({ EMQ_METRICS_REDIS: 'off' }).metricsRedis).toBe(false);
    expect(() => readWorkerConfig({ EMQ_METRICS_REDIS: 'no' })).toThrow(
      /EMQ_METRICS_REDIS must be on or off/,
    );
    expect(readWorkerConfig({ EMQ_HEALTH_MAX_HANDLER_MS: '60000' }).healthMaxHandlerMs).toBe(60_000);
    expect(() => readWorkerConfig({ EMQ_HEALTH_MAX_HANDLER_MS: '0' })).toThrow(/EMQ_HEALTH_MAX_HANDLER_MS/);
  });

  it('with EMQ_METRICS_REDIS=off serves its own metrics only, and a scrape reads nothing from Redis', async () => {
    const { app, url } = await bootWorker({ REDIS_URL: redisUrl(), EMQ_METRICS_REDIS: 'off' });
    const redis = connect();
    const monitor = await openMonitor();
    try {
      const events = app.get(ProcessorExplorer).requireLoop(DEMO_QUEUE).events;
      const completed = new Promise((resolve) => events.once('completed', resolve));
      await app.get(QueueService).enqueue(DEMO_QUEUE, { hello: 'ops' }, { name: 'echo' });
      await completed;

      // What the scrapes send to Redis: between two markers, nothing at all from this application.
      const prefix = app.get(QueueService).settings.keyPrefix;
      const sent: string[][] = [];
      const [start, end] = [`start-${prefix}`, `end-${prefix}`];
      let counting = false;
      const ended = new Promise<void>((resolve) => {
        monitor.on('monitor', (_time: string, args: string[]) => {
          const echoed = args[0]?.toLowerCase() === 'echo' ? args[1] : undefined;
          if (echoed === start) counting = true;
          if (echoed === end) resolve();
          if (counting && echoed === undefined && args.some((arg) => arg.includes(`${prefix}:queues`))) {
            sent.push(args);
          }
        });
      });
      await redis.echo(start);
      const res = await fetch(`${url}/metrics`);
      const scrape = parseExposition(await res.text());
      await redis.echo(end);
      await ended;

      expect(res.status).toBe(200);
      expect(valueOf(scrape, 'echomq_settlements_total', { queue: DEMO_QUEUE, outcome: 'completed' })).toBe(
        1,
      );
      expect(valueOf(scrape, 'echomq_handlers_running', { queue: DEMO_QUEUE })).toBe(0);
      expect(scrape.types.get('process_cpu_user_seconds_total')).toBe('counter');
      for (const name of ['echomq_queue_jobs', 'echomq_transitions_total', 'echomq_redis_up']) {
        expect(samplesOf(scrape, name)).toEqual([]);
      }
      expect(sent).toEqual([]);

      const head = await fetch(`${url}/metrics`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe('');
      const post = await fetch(`${url}/metrics`, { method: 'POST' });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD');
    } finally {
      monitor.disconnect();
      await redis.quit();
      await app.close();
    }
  });

  it('answers /health/live without Redis and /health/ready (and /health) with it, through an outage', async () => {
    const server = await RedisServer.start();
    const { app, url } = await bootWorker({ REDIS_URL: server.url });
    try {
      const live = await health(url, '/health/live');
      expect(live).toMatchObject({
        status: 200,
        body: {
          status: 'ok',
          info: { echomq: { status: 'up', loops: { [DEMO_QUEUE]: { state: 'claiming' } } } },
        },
      });
      expect(live.body.info.echomq.redis).toBeUndefined();
      for (const path of ['/health/ready', '/health']) {
        expect(await health(url, path)).toMatchObject({
          status: 200,
          body: {
            info: { echomq: { redis: { reachable: true }, loops: { [DEMO_QUEUE]: { state: 'claiming' } } } },
          },
        });
      }

      const client = app.get(RedisConnections).client;
      const closed = new Promise((resolve) => client.once('close', resolve));
      await server.stop();
      await closed;
      // Not ready while Redis is away; alive all the same: restarting it would mend nothing.
      for (const path of ['/health/ready', '/health']) {
        const down = await health(url, path);
        expect(down).toMatchObject({ status: 503, body: { status: 'error' } });
        expect(down.body.error.echomq.message).toContain(`Redis at 127.0.0.1:${server.port} is unreachable`);
      }
      expect(await health(url, '/health/live')).toMatchObject({ status: 200, body: { status: 'ok' } });
    } finally {
      await app.close();
      await server.destroy();
    }
  });
});
