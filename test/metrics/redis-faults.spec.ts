import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { Processor, QueueService, type Job } from '@app/echomq';
import { ProcessorExplorer, RedisConnections } from '@app/echomq/internal';
import { EchoMqMetrics, QUEUES_READ_AT_ONCE } from '@app/echomq/metrics';
import { RedisSnapshots } from '@app/echomq/metrics/redis-snapshot';
import { FaultProxy } from '../support/fault-proxy';
import { openMonitor } from '../support/monitor';
import { bootApp } from '../support/nest';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import { RedisServer } from '../support/redis-server';
import { parseExposition, samplesOf, valueOf } from './support/exposition';

/** A proxy in front of the suite's Redis, for faults on the application's connection only. */
async function proxyToSuiteRedis(): Promise<FaultProxy> {
  const url = new URL(redisUrl());
  return FaultProxy.start({ target: { host: url.hostname, port: Number(url.port) } });
}

/** A producer-only application under a key prefix of its own, connected through `url`. */
function bootProducer(url: string, options: { commandTimeoutMs: number; replayWindowMs?: number }) {
  const keyPrefix = `flt-${randomBytes(4).toString('hex')}`;
  return bootApp([], { keyPrefix, connection: { url }, ...options });
}

describe('metrics while Redis misbehaves', () => {
  it('stops a snapshot at the first group of queues that met an outage: the next group is never sent', async () => {
    const proxy = await proxyToSuiteRedis();
    const app = await bootProducer(proxy.url, { commandTimeoutMs: 500 });
    const redis = connect();
    const monitor = await openMonitor();
    try {
      const queues = app.get(QueueService);
      const names = Array.from({ length: QUEUES_READ_AT_ONCE + 4 }, () => uniqueQueue('faulty'));
      for (const queue of names) await queues.enqueue(queue, { n: 1 });

      // The first read naming a queue loses its reply and its connection closes: every read of
      // the first group fails with an unknown outcome, as at a deadline, and the second group,
      // which a reconnect would let through, is not tried.
      const read = new Set<string>();
      const [start, end] = [
        `start-${randomBytes(4).toString('hex')}`,
        `end-${randomBytes(4).toString('hex')}`,
      ];
      let counting = false;
      const ended = new Promise<void>((resolve) => {
        monitor.on('monitor', (_time: string, args: string[], source: string) => {
          const echoed = args[0]?.toLowerCase() === 'echo' ? args[1] : undefined;
          if (echoed === start) counting = true;
          if (echoed === end) resolve();
          if (!counting || source === 'lua') return;
          for (const arg of args) {
            const queue = /\{([^}]+)\}/.exec(arg)?.[1];
            if (queue !== undefined && names.includes(queue)) read.add(queue);
          }
        });
      });
      // The snapshot reads the queues by name (QueueService.listQueues): the second group is what
      // comes after the first 16.
      const secondGroup = [...names].sort().slice(QUEUES_READ_AT_ONCE);
      await redis.echo(start);
      proxy.loseNextReplyThenClose(/\{/);
      const scrape = parseExposition(await app.get(EchoMqMetrics).text());
      await redis.echo(end);
      await ended;

      expect(valueOf(scrape, 'echomq_redis_up')).toBe(0);
      expect(samplesOf(scrape, 'echomq_queue_jobs')).toEqual([]);
      // None of the second group reached Redis. (How many of the first did depends on when the
      // connection closed under the load of the run; on a busy machine MONITOR may show none.)
      expect(secondGroup).toHaveLength(names.length - QUEUES_READ_AT_ONCE);
      expect([...read].filter((queue) => secondGroup.includes(queue))).toEqual([]);
    } finally {
      monitor.disconnect();
      await redis.quit();
      await proxy.stop();
      await app.close();
    }
  });

  it('answers within its budget from a Redis gone silent, with nothing read and the reason logged once', async () => {
    const proxy = await proxyToSuiteRedis();
    // A command deadline longer than the test may run: only the budget ends this snapshot.
    const app = await bootProducer(proxy.url, { commandTimeoutMs: 60_000, replayWindowMs: 120_000 });
    try {
      const warnings: string[] = [];
      const logger = { warn: (line: string) => warnings.push(line), log: () => undefined };
      const reachability = app.get(RedisConnections).reachability;
      const queue = uniqueQueue('silent');
      await app.get(QueueService).enqueue(queue, { n: 1 });
      const before = await new RedisSnapshots(app.get(QueueService), reachability, logger, 1_000, 300).get();
      expect(before).toMatchObject({ complete: true, queues: [{ queue }] });

      proxy.silence();
      // The socket still looks up: the fast path of an unreachable Redis does not apply.
      expect(reachability.reachable).toBe(true);
      const snapshot = await new RedisSnapshots(
        app.get(QueueService),
        reachability,
        logger,
        1_000,
        300,
      ).get();
      expect(snapshot).toMatchObject({ complete: false, queues: [] });
      expect(warnings).toEqual([expect.stringContaining('not read within 300 ms')]);
    } finally {
      // Closing the proxy's sockets fails the commands still waiting, so the application can close.
      await proxy.stop();
      await app.close();
    }
  });

  it('scrapes a worker whose Redis is down: redis_up 0, no queue series, its own runtime series', async () => {
    const server = await RedisServer.start();
    const queue = uniqueQueue('down-scrape');
    @Processor(queue)
    class Echo {
      process(job: Job) {
        return job.data;
      }
    }
    let app: INestApplication | undefined;
    try {
      app = await bootApp([Echo], { connection: { url: server.url }, commandTimeoutMs: 500 });
      const events = app.get(ProcessorExplorer).requireLoop(queue).events;
      const completed = new Promise((resolve) => events.once('completed', resolve));
      await app.get(QueueService).enqueue(queue, { n: 1 });
      await completed;

      const client = app.get(RedisConnections).client;
      const closed = new Promise((resolve) => client.once('close', resolve));
      await server.stop();
      await closed;
      const scrape = parseExposition(await app.get(EchoMqMetrics).text());
      expect(valueOf(scrape, 'echomq_redis_up')).toBe(0);
      expect(samplesOf(scrape, 'echomq_queue_jobs')).toEqual([]);
      expect(samplesOf(scrape, 'echomq_transitions_total')).toEqual([]);
      expect(valueOf(scrape, 'echomq_settlements_total', { queue, outcome: 'completed' })).toBe(1);
      expect(valueOf(scrape, 'echomq_handlers_running', { queue })).toBe(0);
    } finally {
      await app?.close();
      await server.destroy();
    }
  });
});
