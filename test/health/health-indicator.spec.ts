import type { INestApplication } from '@nestjs/common';
import type { HealthIndicatorResult } from '@nestjs/terminus';
import { Processor, QueueService, type Job } from '@app/echomq';
import { InvalidArgumentError, ProcessorExplorer, RedisConnections, queueKeys } from '@app/echomq/internal';
import { EchoMqHealthIndicator, type EchoMqHealthDetails } from '@app/echomq/health';
import { DeferredMap } from '../worker/fixtures/support';
import { FaultProxy } from '../support/fault-proxy';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import { freePort, RedisServer } from '../support/redis-server';
import { EchoMqMetrics } from '@app/echomq/metrics';
import { eventually } from '../metrics/support/eventually';
import { parseExposition, samplesOf, valueOf } from '../metrics/support/exposition';
import { bootWithHealth } from './support/boot';
import { NoDeadlineConnections } from './support/no-deadline-connections';

type Health = HealthIndicatorResult<'echomq'>;
type Details = EchoMqHealthDetails & { status: 'up' | 'down' };

const details = (result: Health): Details => result.echomq as unknown as Details;

/** A processor class for `queue` whose jobs wait on `gates` (by id) until the test lets them go. */
function gatedProcessor(queue: string, gates: DeferredMap<string>, concurrency = 1) {
  @Processor(queue, { concurrency })
  class Gated {
    process(job: Job) {
      return gates.get(job.id).promise;
    }
  }
  return Gated;
}

/** Resolves on the next `event` of the application's command connection. */
function next(app: INestApplication, event: 'close' | 'ready'): Promise<void> {
  const client = app.get(RedisConnections).client;
  return new Promise((resolve) => client.once(event, () => resolve()));
}

describe('EchoMqHealthIndicator', () => {
  it('is up while Redis answers and the loops claim, a loop waiting for a slot included', async () => {
    const queue = uniqueQueue('health-up');
    const gates = new DeferredMap<string>();
    const app = await bootWithHealth([gatedProcessor(queue, gates)]);
    try {
      const indicator = app.get(EchoMqHealthIndicator);
      const idle = await eventually(
        async () => details(await indicator.isHealthy('echomq')),
        (now) => now.loops[queue]?.step === 'waiting for work',
        'the loop idle on its wake list',
      );
      expect(idle).toMatchObject({
        status: 'up',
        redis: { reachable: true },
        loops: { [queue]: { state: 'claiming', handlersRunning: 0, oldestHandlerMs: null } },
      });
      // Idle: blocked on its wake list, within that wait's bound (its timeout plus the watchdog's grace).
      const { forMs, boundMs } = idle.loops[queue];
      expect(forMs).toBeGreaterThanOrEqual(0);
      expect(forMs).toBeLessThanOrEqual(boundMs as number);
      // The address of Redis is named only when it is unreachable.
      expect(idle.redis).toEqual({ reachable: true });

      // Its one slot taken by a handler that waits: the loop waits for the slot, with no bound.
      const id = await app.get(QueueService).enqueue(queue, 'hold the slot');
      const full = await eventually(
        async () => details(await indicator.isHealthy('echomq', { stuckMarginMs: 0 })),
        (now) => now.loops[queue].step === 'waiting for a slot',
        'the loop waiting for its slot',
      );
      expect(full).toMatchObject({ status: 'up', loops: { [queue]: { boundMs: null, handlersRunning: 1 } } });
      gates.get(id).resolve('done');

      // Stopped on purpose: not meant to claim, so still up.
      await app.get(ProcessorExplorer).stopQueue(queue);
      expect(details(await indicator.isHealthy('echomq'))).toMatchObject({
        status: 'up',
        loops: { [queue]: { state: 'stopped' } },
      });
    } finally {
      gates.resolveAll('done');
      await app.close();
    }
  });

  it('refuses bad options with a typed error', async () => {
    const app = await bootWithHealth([]);
    try {
      const indicator = app.get(EchoMqHealthIndicator);
      await expect(indicator.isHealthy('echomq', { stuckMarginMs: -1 })).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
      await expect(indicator.isHealthy('echomq', { pingTimeoutMs: 1.5 })).rejects.toThrow(/pingTimeoutMs/);
      await expect(indicator.isHealthy('echomq', { maxHandlerMs: 0 })).rejects.toThrow(/maxHandlerMs/);
      const redis = 'no' as unknown as boolean;
      await expect(indicator.isHealthy('echomq', { redis })).rejects.toBeInstanceOf(InvalidArgumentError);
    } finally {
      await app.close();
    }
  });

  it('is down while its Redis is stopped, naming it, and up again once Redis is back', async () => {
    const server = await RedisServer.start();
    const queue = uniqueQueue('health-redis');
    const gates = new DeferredMap<string>();
    const app = await bootWithHealth([gatedProcessor(queue, gates)], { connection: { url: server.url } });
    try {
      const indicator = app.get(EchoMqHealthIndicator);
      expect(details(await indicator.isHealthy('echomq')).status).toBe('up');

      const closed = next(app, 'close');
      await server.stop();
      await closed;
      const down = details(await indicator.isHealthy('echomq'));
      expect(down.status).toBe('down');
      expect(down.redis).toEqual({ target: `127.0.0.1:${server.port}`, reachable: false });
      expect(down.message).toContain(`Redis at 127.0.0.1:${server.port} is unreachable`);
      // Its loop retries; it is not what is wrong.
      expect(down.loops[queue].state).toBe('claiming');
      // Liveness leaves Redis out: an outage is no reason to restart the worker.
      const live = details(await indicator.isHealthy('echomq', { redis: false }));
      expect(live).toMatchObject({ status: 'up', loops: { [queue]: { state: 'claiming' } } });
      expect(live.redis).toBeUndefined();

      const ready = next(app, 'ready');
      await server.restart();
      await ready;
      expect(details(await indicator.isHealthy('echomq')).status).toBe('up');
    } finally {
      gates.resolveAll('done');
      await app.close();
      await server.destroy();
    }
  });

  it('is down while a served queue waits for its registration (Redis down at boot), up once it claims', async () => {
    const port = await freePort();
    const queue = uniqueQueue('health-boot');
    const gates = new DeferredMap<string>();
    const app = await bootWithHealth([gatedProcessor(queue, gates)], {
      connection: { url: `redis://127.0.0.1:${port}` },
      // A registration held for a Redis that is down fails at the deadline: keep it short.
      commandTimeoutMs: 500,
    });
    let server: RedisServer | undefined;
    try {
      const indicator = app.get(EchoMqHealthIndicator);
      const down = details(await indicator.isHealthy('echomq'));
      expect(down).toMatchObject({ status: 'down', loops: { [queue]: { state: 'registering' } } });
      expect(down.message).toContain(`queue ${queue} is not served yet`);
      // Waiting for Redis is not for liveness to judge: restarted, it would wait the same way.
      expect(details(await indicator.isHealthy('echomq', { redis: false }))).toMatchObject({
        status: 'up',
        loops: { [queue]: { state: 'registering' } },
      });

      server = await RedisServer.start({ port });
      const up = await eventually(
        async () => details(await indicator.isHealthy('echomq')),
        (now) => now.status === 'up',
        'health once Redis started',
        20_000,
      );
      expect(up.loops[queue].state).toBe('claiming');
    } finally {
      gates.resolveAll('done');
      await app.close();
      await server?.destroy();
    }
  });

  it('reports the age of the oldest handler, and is down past maxHandlerMs: a handler that never returns', async () => {
    const queue = uniqueQueue('health-hung');
    const gates = new DeferredMap<string>();
    // No timeoutMs (the default): a handler that never returns holds its slot for good.
    const app = await bootWithHealth([gatedProcessor(queue, gates)]);
    try {
      const indicator = app.get(EchoMqHealthIndicator);
      await app.get(QueueService).enqueue(queue, 'never returns');
      const held = await eventually(
        async () => details(await indicator.isHealthy('echomq')),
        (now) => now.loops[queue].step === 'waiting for a slot',
        'the hung handler holding the only slot',
      );
      // Without maxHandlerMs a handler is reported, not judged.
      expect(held).toMatchObject({ status: 'up', loops: { [queue]: { handlersRunning: 1 } } });
      expect(held.loops[queue].oldestHandlerMs).toEqual(expect.any(Number));

      const hung = await eventually(
        async () => details(await indicator.isHealthy('echomq', { maxHandlerMs: 50, redis: false })),
        (now) => now.status === 'down',
        'the handler judged past maxHandlerMs',
      );
      expect(hung.loops[queue]).toMatchObject({
        state: 'claiming',
        step: 'waiting for a slot',
        handlersRunning: 1,
      });
      expect(hung.loops[queue].oldestHandlerMs).toBeGreaterThan(50);
      expect(hung.message).toContain(`the claim loop of ${queue} has a handler running for`);
      expect(hung.message).toContain('past maxHandlerMs (0.1 s)');

      // And in this process's metrics, beside nothing read from Redis.
      const scrape = parseExposition(await app.get(EchoMqMetrics).runtimeRegistry.metrics());
      expect(valueOf(scrape, 'echomq_handlers_running', { queue })).toBe(1);
      expect(valueOf(scrape, 'echomq_oldest_handler_seconds', { queue })).toBeGreaterThan(0.05);
      expect(samplesOf(scrape, 'echomq_queue_jobs')).toEqual([]);
    } finally {
      gates.resolveAll('done');
      await app.close();
    }
  });

  it('is down when a claim loop is stuck: a claim that never answers outlives its bound', async () => {
    const url = new URL(redisUrl());
    const proxy = await FaultProxy.start({ target: { host: url.hostname, port: Number(url.port) } });
    const queue = uniqueQueue('health-stuck');
    const gates = new DeferredMap<string>();
    // The shortest bound there is: the least replay window (5 s) and a 100 ms command deadline.
    const app = await bootWithHealth(
      [gatedProcessor(queue, gates)],
      { commandTimeoutMs: 100, replayWindowMs: 5_000 },
      { connections: (options) => new NoDeadlineConnections(options, proxy.url) },
    );
    const redis = connect();
    try {
      const indicator = app.get(EchoMqHealthIndicator);
      const check = async () => details(await indicator.isHealthy('echomq', { stuckMarginMs: 200 }));
      await eventually(check, (now) => now.status === 'up', 'health before the fault');

      // The network goes silent; the loop (idle on its wake list, on a connection of its own) is
      // woken by a job enqueued beside it, and claims through the silent connection.
      proxy.silence();
      await redis.rpush(queueKeys(queue).wake, '1');
      const claiming = await eventually(
        check,
        (now) => now.loops[queue].step === 'claiming',
        'the loop claiming through the silent connection',
      );
      expect(claiming.loops[queue].state).toBe('claiming');
      const stuck = await eventually(
        check,
        (now) => now.loops[queue].state === 'stuck',
        'the loop judged stuck',
        15_000,
      );
      expect(stuck.status).toBe('down');
      expect(stuck.loops[queue]).toMatchObject({ step: 'claiming', boundMs: expect.any(Number) });
      expect(stuck.message).toContain(`the claim loop of ${queue} is stuck: claiming for`);
    } finally {
      // Closing the proxy's sockets fails every command of the client that has no deadline: the
      // stuck claim ends, and so can the shutdown.
      await proxy.stop();
      gates.resolveAll('done');
      await app.close();
      await redis.quit();
    }
  });
});
