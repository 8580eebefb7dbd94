import { queueKeys } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { connect, uniqueQueue } from '../support/redis';
import { keyDump, startApi, type RunningApi } from './support/api';

describe('api: debounce, throttle and the enqueue outcome', () => {
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
    queue = uniqueQueue('api-dedupe');
  });

  const http = () => request(api.url);
  const post = (body: object) => http().post(`/queues/${queue}/jobs`).send(body);

  it('answers every enqueue with its outcome: created, then matched for an idempotency key (201 both)', async () => {
    const plain = await post({ data: 1 }).expect(201);
    expect(plain.body).toEqual({
      id: expect.stringMatching(/^JOB/),
      queue,
      state: 'pending',
      outcome: 'created',
    });
    const first = await post({ data: 1, idempotencyKey: 'once' }).expect(201);
    const again = await post({ data: 2, idempotencyKey: 'once' }).expect(201);
    expect(again.body).toEqual({ ...first.body, outcome: 'matched' });
  });

  it('debounce: a later request replaces the waiting job, which waits in schedule', async () => {
    const debounce = { key: 'reindex-7', delayMs: 60_000, maxWaitMs: 300_000 };
    const first = await post({ data: { v: 1 }, name: 'reindex', debounce }).expect(201);
    expect(first.body).toMatchObject({ state: 'schedule', outcome: 'created' });
    const second = await post({ data: { v: 2 }, debounce }).expect(201);
    expect(second.body).toEqual({ id: first.body.id, queue, state: 'schedule', outcome: 'replaced' });
    const job = await http().get(`/queues/${queue}/jobs/${first.body.id}`).expect(200);
    expect(job.body).toMatchObject({ name: 'reindex', data: { v: 2 }, state: 'schedule' });
  });

  it('throttle: one job per window; later requests get it back as matched', async () => {
    const throttle = { key: 'digest', windowMs: 60_000 };
    const first = await post({ data: 1, throttle, lane: 'tenant-9' }).expect(201);
    expect(first.body).toMatchObject({ state: 'pending', outcome: 'created' });
    const second = await post({ data: 2, throttle }).expect(201);
    expect(second.body).toEqual({ ...first.body, outcome: 'matched' });
    const counts = await http().get(`/queues/${queue}`).expect(200);
    expect(counts.body.counts.pending).toBe(1);
  });

  it.each([
    [
      'debounce with idempotencyKey',
      { debounce: { key: 'k', delayMs: 1 }, idempotencyKey: 'i' },
      /at most one of/,
    ],
    [
      'debounce with throttle',
      { debounce: { key: 'k', delayMs: 1 }, throttle: { key: 'k', windowMs: 1 } },
      /at most one of/,
    ],
    ['debounce with delayMs', { debounce: { key: 'k', delayMs: 1 }, delayMs: 5 }, /no delayMs or runAt/],
    ['maxWaitMs under delayMs', { debounce: { key: 'k', delayMs: 10, maxWaitMs: 5 } }, /debounce\.maxWaitMs/],
    ['an unknown nested field', { debounce: { key: 'k', delayMs: 10, wait: 5 } }, /debounce\.wait/],
    ['a debounce that is a string', { debounce: 'k' }, /debounce must be an object/],
    ['a null throttle', { throttle: null }, /throttle must be an object/],
    ['a throttle without a key', { throttle: { windowMs: 10 } }, /throttle\.key/],
    ['a zero window', { throttle: { key: 'k', windowMs: 0 } }, /throttle\.windowMs/],
  ])('refuses %s with 400 and writes nothing', async (_what, extra, message) => {
    const before = await keyDump(redis, `emq:{${queue}}:*`);
    const res = await post({ data: 1, ...extra }).expect(400);
    expect(res.headers['content-type']).toMatch(/json/);
    expect(JSON.stringify(res.body)).toMatch(message);
    expect(await keyDump(redis, `emq:{${queue}}:*`)).toEqual(before);
  });

  it('refuses debounce and throttle jobs in a bulk request (400), naming the item', async () => {
    const res = await http()
      .post(`/queues/${queue}/jobs/bulk`)
      .send({ jobs: [{ data: 1 }, { data: 2, debounce: { key: 'k', delayMs: 10 } }] })
      .expect(400);
    expect(JSON.stringify(res.body)).toMatch(
      /jobs\[1\]: a job with debounce or throttle is enqueued one at a time/,
    );
    expect(await redis.exists(queueKeys(queue).pending)).toBe(0);
  });

  it('describes debounce, throttle and the outcome in the OpenAPI document', async () => {
    const doc = await http().get('/docs-json').expect(200);
    const schemas = doc.body.components.schemas as Record<
      string,
      { properties: Record<string, unknown>; required?: string[] }
    >;
    expect(Object.keys(schemas.EnqueueJobDto.properties)).toEqual(
      expect.arrayContaining(['debounce', 'throttle', 'backoff']),
    );
    expect(Object.keys(schemas.DebounceDto.properties).sort()).toEqual(['delayMs', 'key', 'maxWaitMs']);
    expect(schemas.DebounceDto.required?.sort()).toEqual(['delayMs', 'key']);
    expect(Object.keys(schemas.ThrottleDto.properties).sort()).toEqual(['key', 'windowMs']);
    expect(schemas.SubmittedJobResponse.properties.outcome).toMatchObject({
      enum: ['created', 'matched', 'replaced'],
    });
    const created = doc.body.paths['/queues/{queue}/jobs'].post.responses['201'];
    expect(JSON.stringify(created)).toContain('SubmittedJobResponse');
  });
});
