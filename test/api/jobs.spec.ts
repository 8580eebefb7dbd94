import { claimJobs, ENQUEUE_MANY_MAX as BULK_MAX, failJob, RedisConnections } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { RedisServer } from '../support/redis-server';
import { connect, scriptContext, uniqueQueue } from '../support/redis';
import { startApi, type RunningApi } from './support/api';

describe('api: jobs and queues over HTTP', () => {
  let api: RunningApi;
  let redis: Redis;
  let queue: string;

  beforeAll(async () => {
    api = await startApi();
    redis = connect();
  });
  afterAll(async () => {
    await api.close();
    await redis.quit();
  });
  beforeEach(() => {
    queue = uniqueQueue('api');
  });

  const http = () => request(api.url);
  const enqueue = async (body: object): Promise<string> => {
    const res = await http().post(`/queues/${queue}/jobs`).send(body).expect(201);
    return res.body.id as string;
  };

  /** claim + fail(unrecoverable) through the scripts, as a worker would, to make a dead job. */
  const killJob = async (id: string): Promise<void> => {
    const ctx = scriptContext(redis, queue);
    const batch = await claimJobs(ctx, { count: 10, leaseMs: 30_000, claimantPrefix: 'test' });
    const claim = batch.jobs.find((job) => job.id === id);
    if (!claim) throw new Error(`job ${id} was not claimed`);
    const outcome = await failJob(ctx, claim, { error: 'boom', backoffMs: 0, unrecoverable: true });
    expect(outcome.state).toBe('dead');
  };

  it('enqueues a job (201) and reads it back as pending', async () => {
    const res = await http()
      .post(`/queues/${queue}/jobs`)
      .send({ name: 'welcome', data: { to: 'ada@example.com' }, maxAttempts: 5 })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^JOB[0-9A-Za-z]{11}$/),
      queue,
      state: 'pending',
      outcome: 'created',
    });

    const job = await http().get(`/queues/${queue}/jobs/${res.body.id}`).expect(200);
    expect(job.body).toMatchObject({
      id: res.body.id,
      queue,
      name: 'welcome',
      state: 'pending',
      data: { to: 'ada@example.com' },
      attempts: 0,
      maxAttempts: 5,
      attemptsLeft: 5,
    });
    expect(Number.isNaN(Date.parse(job.body.enqueuedAt))).toBe(false);
  });

  it('stores the payload exactly as sent, odd keys and null included', async () => {
    const raw = '{"data":{"toString":"t","hasOwnProperty":{"valueOf":1},"list":[1,"two",null,{"é":"ü"}]}}';
    const res = await http()
      .post(`/queues/${queue}/jobs`)
      .set('content-type', 'application/json')
      .send(raw)
      .expect(201);
    const job = await http().get(`/queues/${queue}/jobs/${res.body.id}`).expect(200);
    expect(JSON.stringify(job.body.data)).toBe(JSON.stringify(JSON.parse(raw).data));

    const nullJob = await enqueue({ data: null });
    expect((await http().get(`/queues/${queue}/jobs/${nullJob}`)).body.data).toBeNull();
  });

  it('refuses prototype keys anywhere in the body rather than silently dropping them', async () => {
    for (const raw of [
      '{"data":{"__proto__":{"x":1}}}',
      '{"data":[{"constructor":"c"}]}',
      '{"data":1,"prototype":{}}',
    ]) {
      const res = await http()
        .post(`/queues/${queue}/jobs`)
        .set('content-type', 'application/json')
        .send(raw)
        .expect(400);
      expect(JSON.stringify(res.body.message)).toMatch(/is not accepted/);
    }
    expect((await http().get(`/queues/${queue}`)).body.counts.pending).toBe(0);
  });

  it('puts a delayed job in schedule, and accepts runAt as an ISO string or epoch ms', async () => {
    const delayed = await http().post(`/queues/${queue}/jobs`).send({ data: 1, delayMs: 60_000 }).expect(201);
    expect(delayed.body.state).toBe('schedule');
    const view = await http().get(`/queues/${queue}/jobs/${delayed.body.id}`).expect(200);
    expect(view.body.state).toBe('schedule');
    expect(Date.parse(view.body.runAt)).toBeGreaterThan(Date.now());

    const future = new Date(Date.now() + 3_600_000).toISOString();
    const iso = await http().post(`/queues/${queue}/jobs`).send({ data: 2, runAt: future }).expect(201);
    expect(iso.body.state).toBe('schedule');
    expect((await http().get(`/queues/${queue}/jobs/${iso.body.id}`)).body.runAt).toBe(future);

    const past = await http().post(`/queues/${queue}/jobs`).send({ data: 3, runAt: 1_000 }).expect(201);
    expect(past.body.state).toBe('pending');
  });

  it('returns the first job again for a repeated idempotency key', async () => {
    const first = await enqueue({ data: 1, idempotencyKey: 'signup-42' });
    const second = await enqueue({ data: 2, idempotencyKey: 'signup-42' });
    expect(second).toBe(first);
    const counts = await http().get(`/queues/${queue}`).expect(200);
    expect(counts.body.counts.pending).toBe(1);
  });

  it('keeps a per-job backoff and maxAttempts on the job, and says they are its own', async () => {
    const backoff = { type: 'exponential', delayMs: 1_000, maxDelayMs: 60_000 };
    const id = await enqueue({ data: 1, backoff, maxAttempts: 4 });
    const own = await http().get(`/queues/${queue}/jobs/${id}`).expect(200);
    expect(own.body).toMatchObject({ backoff, maxAttempts: 4, ownMaxAttempts: true });
    const plain = await http()
      .get(`/queues/${queue}/jobs/${await enqueue({ data: 2 })}`)
      .expect(200);
    expect(plain.body.ownMaxAttempts).toBe(false);
    expect(plain.body.backoff).toBeUndefined();
  });

  it.each([
    ['a custom policy', { type: 'custom' }, /custom/],
    ['an unknown type', { type: 'linear', delayMs: 10 }, /type/],
    ['a delay out of range', { type: 'fixed', delayMs: -1 }, /delayMs/],
    ['a field of another type', { type: 'fixed', delayMs: 10, jitter: 0.5 }, /jitter/],
    ['not an object', 'fixed', /backoff must be an object/],
  ])(
    'refuses %s as a backoff with a 400 naming the problem, writing nothing',
    async (_case, backoff, pattern) => {
      const res = await http().post(`/queues/${queue}/jobs`).send({ data: 1, backoff }).expect(400);
      expect(JSON.stringify(res.body.message)).toMatch(pattern);
      expect((await http().get(`/queues/${queue}`)).body.counts.pending).toBe(0);
    },
  );

  it('enqueues in bulk (ids in input order) and all or nothing', async () => {
    const res = await http()
      .post(`/queues/${queue}/jobs/bulk`)
      .send({ jobs: [{ data: 'a' }, { data: 'b', delayMs: 60_000 }, { name: 'c', data: 'c' }] })
      .expect(201);
    expect(res.body.ids).toHaveLength(3);
    const views = await Promise.all(
      (res.body.ids as string[]).map((id) => http().get(`/queues/${queue}/jobs/${id}`).expect(200)),
    );
    expect(views.map((view) => [view.body.data, view.body.state])).toEqual([
      ['a', 'pending'],
      ['b', 'schedule'],
      ['c', 'pending'],
    ]);

    const bad = await http()
      .post(`/queues/${queue}/jobs/bulk`)
      .send({ jobs: [{ data: 'd' }, { data: 'e', maxAttempts: 0 }] })
      .expect(400);
    expect(JSON.stringify(bad.body.message)).toContain('jobs.1.maxAttempts');
    const counts = await http().get(`/queues/${queue}`).expect(200);
    expect(counts.body.counts).toEqual({ pending: 2, active: 0, schedule: 1, dead: 0 });

    await http()
      .post(`/queues/${queue}/jobs/bulk`)
      .send({ jobs: Array.from({ length: BULK_MAX + 1 }, () => ({ data: 0 })) })
      .expect(400);
  });

  it('lists jobs by state: pending newest first, schedule soonest first, with limit and paging', async () => {
    const ids: string[] = [];
    for (let n = 0; n < 4; n++) ids.push(await enqueue({ data: n }));
    const newestFirst = [...ids].reverse();

    const all = await http().get(`/queues/${queue}/jobs`).expect(200);
    expect(all.body.jobs.map((job: { id: string }) => job.id)).toEqual(newestFirst);
    expect(all.body.jobs[0]).toMatchObject({ state: 'pending', data: 3 });

    const page1 = await http().get(`/queues/${queue}/jobs?state=pending&limit=2`).expect(200);
    expect(page1.body.jobs.map((job: { id: string }) => job.id)).toEqual(newestFirst.slice(0, 2));
    const page2 = await http()
      .get(`/queues/${queue}/jobs`)
      .query({ state: 'pending', limit: 2, after: newestFirst[1] })
      .expect(200);
    expect(page2.body.jobs.map((job: { id: string }) => job.id)).toEqual(newestFirst.slice(2));

    const later = await enqueue({ data: 'later', delayMs: 90_000 });
    const sooner = await enqueue({ data: 'sooner', delayMs: 30_000 });
    const scheduled = await http().get(`/queues/${queue}/jobs?state=schedule`).expect(200);
    expect(scheduled.body.jobs.map((job: { id: string }) => job.id)).toEqual([sooner, later]);

    expect((await http().get(`/queues/${queue}/jobs?state=dead`).expect(200)).body.jobs).toEqual([]);
    expect((await http().get(`/queues/${queue}/jobs?state=active`).expect(200)).body.jobs).toEqual([]);
  });

  it('retries a dead job (200), refuses one that is not dead (409), and 404s an unknown one', async () => {
    const id = await enqueue({ data: 'x', maxAttempts: 2 });
    const notDead = await http().post(`/queues/${queue}/jobs/${id}/retry`).expect(409);
    expect(notDead.body).toMatchObject({ statusCode: 409, error: 'Conflict' });

    await killJob(id);
    const dead = await http().get(`/queues/${queue}/jobs/${id}`).expect(200);
    expect(dead.body).toMatchObject({ state: 'dead', lastError: 'boom', attempts: 1 });
    expect((await http().get(`/queues/${queue}/jobs?state=dead`)).body.jobs[0].id).toBe(id);

    const retried = await http().post(`/queues/${queue}/jobs/${id}/retry`).expect(200);
    expect(retried.body).toEqual({ id, queue, state: 'pending' });
    const view = await http().get(`/queues/${queue}/jobs/${id}`).expect(200);
    expect(view.body).toMatchObject({ state: 'pending', attempts: 1, attemptsLeft: 2 });

    const unknown = await http().post(`/queues/${queue}/jobs/JOB00000000000/retry`).expect(404);
    expect(unknown.body).toMatchObject({ statusCode: 404, error: 'Not Found' });
  });

  it('deletes a job (204), after which it is 404', async () => {
    const id = await enqueue({ data: 'bye' });
    const res = await http().delete(`/queues/${queue}/jobs/${id}`).expect(204);
    expect(res.text).toBe('');
    await http().get(`/queues/${queue}/jobs/${id}`).expect(404);
    await http().delete(`/queues/${queue}/jobs/${id}`).expect(404);
  });

  it('400s a malformed id and 404s an unknown one', async () => {
    const bad = await http().get(`/queues/${queue}/jobs/JOB123`).expect(400);
    expect(bad.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(bad.body.message).toMatch(/Invalid job id/);
    await http().get(`/queues/${queue}/jobs/JOB00000000000`).expect(404);
  });

  it('lists queues with their counts and describes one queue', async () => {
    await enqueue({ data: 1 });
    await enqueue({ data: 2, delayMs: 60_000 });
    const list = await http().get('/queues').expect(200);
    expect(list.body.queues).toContainEqual({
      queue,
      counts: { pending: 1, active: 0, schedule: 1, dead: 0 },
    });

    const one = await http().get(`/queues/${queue}`).expect(200);
    expect(one.body).toEqual({
      queue,
      counts: { pending: 1, active: 0, schedule: 1, dead: 0 },
      metrics: expect.objectContaining({ enqueued: 2 }),
      paused: false,
      heldUntil: null,
      partitions: 1,
    });
  });

  it('pauses and resumes a queue', async () => {
    expect((await http().post(`/queues/${queue}/pause`).expect(200)).body).toEqual({ queue, paused: true });
    expect((await http().get(`/queues/${queue}`)).body.paused).toBe(true);
    // Enqueue keeps working on a paused queue.
    await enqueue({ data: 'while paused' });
    expect((await http().post(`/queues/${queue}/resume`).expect(200)).body).toEqual({ queue, paused: false });
    expect((await http().get(`/queues/${queue}`)).body.paused).toBe(false);
  });

  it('reports health 200 while Redis answers', async () => {
    const res = await http().get('/health').expect(200);
    expect(res.body).toMatchObject({ status: 'ok', info: { redis: { status: 'up' } } });
  });

  it('sends security headers', async () => {
    const res = await http().get('/health').expect(200);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toBeDefined();
    expect(res.headers['x-powered-by']).toBeUndefined();
  });

  it('serves the OpenAPI document at /docs-json and the UI at /docs', async () => {
    const doc = await http().get('/docs-json').expect(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    const routes = Object.entries(doc.body.paths as Record<string, object>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(routes.sort()).toEqual(
      [
        'GET /health',
        'GET /queues',
        'GET /queues/{queue}',
        'POST /queues/{queue}/pause',
        'POST /queues/{queue}/resume',
        'POST /queues/{queue}/jobs',
        'POST /queues/{queue}/jobs/bulk',
        'GET /queues/{queue}/jobs',
        'GET /queues/{queue}/jobs/{id}',
        'POST /queues/{queue}/jobs/{id}/retry',
        'DELETE /queues/{queue}/jobs/{id}',
        'GET /queues/{queue}/lanes',
        'PUT /queues/{queue}/lanes/{lane}',
        'POST /queues/{queue}/lanes/{lane}/pause',
        'POST /queues/{queue}/lanes/{lane}/resume',
        'GET /queues/{queue}/limits',
        'PUT /queues/{queue}/limits',
        'GET /queues/{queue}/schedules',
        'GET /queues/{queue}/schedules/{key}',
        'PUT /queues/{queue}/schedules/{key}',
        'DELETE /queues/{queue}/schedules/{key}',
        'POST /queues/{queue}/drain',
        'POST /queues/{queue}/clean',
        'POST /queues/{queue}/obliterate',
        'POST /queues/{queue}/dead/retry',
        'POST /queues/{queue}/jobs/{id}/promote',
        'PATCH /queues/{queue}/jobs/{id}',
        'GET /queues/{queue}/completed',
      ].sort(),
    );
    expect(doc.body.components.securitySchemes).toHaveProperty('bearer');
    expect(doc.body.components.schemas.EnqueueJobDto.required).toEqual(['data']);

    const ui = await http().get('/docs').expect(200);
    expect(ui.headers['content-type']).toMatch(/html/);
  });
});

describe('api: health when Redis goes away', () => {
  it('answers 503 while its Redis is down and 200 again once it is back', async () => {
    const server = await RedisServer.start();
    const api = await startApi({ REDIS_URL: server.url });
    try {
      await request(api.url).get('/health').expect(200);

      // Wait on the client's own events (not a timer) to know it has seen the outage and the recovery.
      // (events.once would reject on the 'error' events a reconnecting client emits.)
      const client = api.app.get(RedisConnections).client;
      const next = (event: string) => new Promise<void>((resolve) => client.once(event, () => resolve()));
      const closed = next('close');
      await server.stop();
      await closed;
      const down = await request(api.url).get('/health').expect(503);
      expect(down.body).toMatchObject({ status: 'error', error: { redis: { status: 'down' } } });

      const ready = next('ready');
      await server.restart();
      await ready;
      await request(api.url).get('/health').expect(200);
    } finally {
      await api.close();
      await server.destroy();
    }
  });
});
