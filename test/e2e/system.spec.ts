import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { JobFailedError, QueueService, type QueueEvent } from '@app/echomq';
import { DEMO_QUEUE } from '../../apps/worker/src/demo.processor';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import { startApi, type RunningApi } from '../api/support/api';
import { redisUrl } from '../support/redis';

/**
 * The api and the worker app booted together on the suite's Redis, talking only
 * through it, exactly as `npm start` runs them. This is the only suite that uses
 * the `demo` queue, so nothing else competes for its jobs.
 */
const KEY_PREFIX = `sys-${process.pid}`;

describe('the api and the worker together', () => {
  let api: RunningApi;
  let worker: INestApplicationContext;
  let queues: QueueService;

  beforeAll(async () => {
    worker = await NestFactory.createApplicationContext(
      WorkerModule.forConfig({
        redisUrl: redisUrl(),
        demoConcurrency: 10,
        shutdownGraceMs: 500,
        keyPrefix: KEY_PREFIX,
      }),
      { logger: ['error'] },
    );
    await worker.init();
    queues = worker.get(QueueService);
    // Both apps under one key prefix of their own (EMQ_KEY_PREFIX): they meet only if they agree.
    api = await startApi({ EMQ_KEY_PREFIX: KEY_PREFIX });
  });

  afterAll(async () => {
    await api?.close();
    await worker?.close();
  });

  async function post(path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(`${api.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: response.status === 204 ? undefined : await response.json() };
  }

  async function get(path: string): Promise<{ status: number; body: any }> {
    const response = await fetch(`${api.url}${path}`);
    return { status: response.status, body: await response.json() };
  }

  /**
   * Records the queue's events from now on; until() resolves with the first recorded
   * event of a type about a job, whether it came before or after the call.
   */
  async function recordEvents(): Promise<{
    until(type: string, id: string): Promise<QueueEvent>;
    stop(): void;
  }> {
    const seen: QueueEvent[] = [];
    const waiters: (() => void)[] = [];
    const stop = await queues.subscribe(DEMO_QUEUE, (event) => {
      seen.push(event);
      for (const wake of waiters.splice(0)) wake();
    });
    const until = async (type: string, id: string): Promise<QueueEvent> => {
      for (;;) {
        const found = seen.find((event) => event.type === type && event.ids.includes(id));
        if (found) return found;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    };
    return { until, stop };
  }

  it('processes a job posted over HTTP and reads it back completed with its result', async () => {
    const posted = await post(`/queues/${DEMO_QUEUE}/jobs`, { name: 'echo', data: { hello: 'world' } });
    expect(posted.status).toBe(201);
    expect(posted.body).toMatchObject({ queue: DEMO_QUEUE });
    await expect(queues.waitFor(DEMO_QUEUE, posted.body.id, 10_000)).resolves.toEqual({ hello: 'world' });
    const read = await get(`/queues/${DEMO_QUEUE}/jobs/${posted.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: posted.body.id, state: 'completed', result: { hello: 'world' } });
  });

  it('lands a delayed job in schedule and runs it no earlier than its run-at', async () => {
    const posted = await post(`/queues/${DEMO_QUEUE}/jobs`, { name: 'echo', data: 'later', delayMs: 400 });
    expect(posted.status).toBe(201);
    expect(posted.body.state).toBe('schedule');
    const scheduled = await get(`/queues/${DEMO_QUEUE}/jobs/${posted.body.id}`);
    expect(scheduled.body.state).toBe('schedule');
    const runAt = Date.parse(scheduled.body.runAt);
    await expect(queues.waitFor(DEMO_QUEUE, posted.body.id, 10_000)).resolves.toBe('later');
    const done = await get(`/queues/${DEMO_QUEUE}/jobs/${posted.body.id}`);
    expect(done.body.state).toBe('completed');
    expect(Date.parse(done.body.finishedAt)).toBeGreaterThanOrEqual(runAt);
  });

  it('retries a dead job over HTTP with a fresh budget', async () => {
    // Fails on attempt 1 with a budget of 1, so it dies; the retry's attempt 2 succeeds.
    const posted = await post(`/queues/${DEMO_QUEUE}/jobs`, {
      name: 'fail',
      data: { failTimes: 1 },
      maxAttempts: 1,
    });
    await expect(queues.waitFor(DEMO_QUEUE, posted.body.id, 10_000)).rejects.toBeInstanceOf(JobFailedError);
    const dead = await get(`/queues/${DEMO_QUEUE}/jobs/${posted.body.id}`);
    expect(dead.body).toMatchObject({ state: 'dead', attempts: 1 });
    expect(dead.body.lastError).toContain('demo failure 1 of 1');

    const retried = await post(`/queues/${DEMO_QUEUE}/jobs/${posted.body.id}/retry`);
    expect(retried.status).toBe(200);
    await expect(queues.waitFor(DEMO_QUEUE, posted.body.id, 10_000)).resolves.toEqual({ attempt: 2 });
    expect((await post(`/queues/${DEMO_QUEUE}/jobs/${posted.body.id}/retry`)).status).toBe(409);
  });

  it('sends a poison job straight to dead', async () => {
    const posted = await post(`/queues/${DEMO_QUEUE}/jobs`, { name: 'poison', data: null, maxAttempts: 5 });
    await expect(queues.waitFor(DEMO_QUEUE, posted.body.id, 10_000)).rejects.toBeInstanceOf(JobFailedError);
    expect((await get(`/queues/${DEMO_QUEUE}/jobs/${posted.body.id}`)).body).toMatchObject({
      state: 'dead',
      attempts: 1,
    });
  });

  it('removes a running job over HTTP', async () => {
    const events = await recordEvents();
    const posted = await post(`/queues/${DEMO_QUEUE}/jobs`, { name: 'sleep', data: { ms: 60_000 } });
    const id = posted.body.id as string;
    await events.until('claimed', id).finally(() => events.stop());
    expect((await get(`/queues/${DEMO_QUEUE}/jobs/${id}`)).body.state).toBe('active');
    const removed = await fetch(`${api.url}/queues/${DEMO_QUEUE}/jobs/${id}`, { method: 'DELETE' });
    expect(removed.status).toBe(204);
    expect((await get(`/queues/${DEMO_QUEUE}/jobs/${id}`)).status).toBe(404);
  });
});
