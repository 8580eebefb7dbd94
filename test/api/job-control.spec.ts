import type { Redis } from 'ioredis';
import request from 'supertest';
import { jobRecord } from '../support/assertions';
import { connect, scriptContext, uniqueQueue } from '../support/redis';
import { enqueue as enqueueRecords, oldIds } from '../control/support/control';
import { keyDump, queuePattern, startApi, type RunningApi } from './support/api';

/** Drain, clean, obliterate, retry all, promote and update over real HTTP, against the suite's Redis. */
describe('api: job control over HTTP', () => {
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
    queue = uniqueQueue('control');
  });

  const http = () => request(api.url);
  const enqueue = async (body: object): Promise<string> =>
    (await http().post(`/queues/${queue}/jobs`).send(body).expect(201)).body.id as string;
  const refused = async (send: () => request.Test, status: number, text: RegExp): Promise<void> => {
    const before = await keyDump(redis, queuePattern(queue));
    const res = await send().expect(status);
    expect(res.headers['content-type']).toMatch(/json/);
    expect(JSON.stringify(res.body)).toMatch(text);
    expect(await keyDump(redis, queuePattern(queue))).toEqual(before);
  };

  it('drains pending and scheduled jobs, or keeps the scheduled', async () => {
    await enqueue({ data: 1, lane: 'vip', priority: 2 });
    const later = await enqueue({ data: 2, delayMs: 60_000 });
    expect(
      (await http().post(`/queues/${queue}/drain`).send({ keepScheduled: true }).expect(200)).body,
    ).toEqual({
      queue,
      removed: 1,
    });
    expect((await http().get(`/queues/${queue}/jobs/${later}`).expect(200)).body.state).toBe('schedule');
    expect((await http().post(`/queues/${queue}/drain`).expect(200)).body.removed).toBe(1);
  });

  it('cleans one state by age and refuses active and completed with a 400', async () => {
    // An id's time is its enqueue time: a job enqueued two hours ago, written as the library does.
    const [id] = await enqueueRecords(scriptContext(redis, queue), [jobRecord(oldIds(53, 2 * 3_600_000)())]);
    await enqueue({ data: 2 });
    const res = await http()
      .post(`/queues/${queue}/clean`)
      .send({ state: 'pending', olderThanMs: 3_600_000 })
      .expect(200);
    expect(res.body).toEqual({ queue, state: 'pending', ids: [id] });
    await refused(
      () => http().post(`/queues/${queue}/clean`).send({ state: 'active', olderThanMs: 0 }),
      400,
      /state/,
    );
    await refused(
      () => http().post(`/queues/${queue}/clean`).send({ state: 'dead', olderThanMs: -1 }),
      400,
      /olderThanMs/,
    );
    await refused(
      () => http().post(`/queues/${queue}/clean`).send({ state: 'dead', olderThanMs: 0, limit: 100_001 }),
      400,
      /limit/,
    );
  });

  it('promotes a scheduled job, and answers 409 for one that is not scheduled, 404 for none', async () => {
    const id = await enqueue({ data: 1, delayMs: 60_000 });
    expect((await http().post(`/queues/${queue}/jobs/${id}/promote`).expect(200)).body).toEqual({
      id,
      queue,
      state: 'pending',
    });
    await refused(() => http().post(`/queues/${queue}/jobs/${id}/promote`), 409, /JOB_STATE/);
    await refused(() => http().post(`/queues/${queue}/jobs/JOB0000000000A/promote`), 404, /JOB_NOT_FOUND/);
  });

  it('updates data, priority, lane and run-at, answering with the job', async () => {
    const id = await enqueue({ data: { v: 1 } });
    const moved = await http()
      .patch(`/queues/${queue}/jobs/${id}`)
      .send({ data: { v: 2 }, lane: 'vip', priority: 4 })
      .expect(200);
    expect(moved.body).toMatchObject({ id, state: 'pending', data: { v: 2 }, lane: 'vip', priority: 4 });
    const later = await http()
      .patch(`/queues/${queue}/jobs/${id}`)
      .send({ runAt: '2999-01-01T00:00:00Z' })
      .expect(200);
    expect(later.body.state).toBe('schedule');
    await refused(() => http().patch(`/queues/${queue}/jobs/${id}`).send({}), 400, /nothing to change/);
    await refused(() => http().patch(`/queues/${queue}/jobs/${id}`).send({ priority: 11 }), 400, /priority/);
    await refused(() => http().patch(`/queues/${queue}/jobs/${id}`).send({ name: 'x' }), 400, /name/);
  });

  it('retries every dead job and obliterates the queue; refuses a bad force with a 400', async () => {
    expect((await http().post(`/queues/${queue}/dead/retry`).expect(200)).body).toEqual({
      queue,
      retried: 0,
    });
    await enqueue({ data: 1 });
    await refused(() => http().post(`/queues/${queue}/obliterate?force=yes`), 400, /force/);
    expect((await http().post(`/queues/${queue}/obliterate`).expect(200)).body).toEqual({
      queue,
      removed: 1,
    });
    expect((await http().get(`/queues/${queue}/jobs`).expect(200)).body.jobs).toEqual([]);
  });

  it('lists every route in OpenAPI', async () => {
    const doc = await http().get('/docs-json').expect(200);
    const paths = Object.keys(doc.body.paths as object);
    for (const path of [
      '/queues/{queue}/drain',
      '/queues/{queue}/clean',
      '/queues/{queue}/obliterate',
      '/queues/{queue}/dead/retry',
      '/queues/{queue}/jobs/{id}/promote',
    ]) {
      expect(paths).toContain(path);
    }
    expect(Object.keys(doc.body.paths['/queues/{queue}/jobs/{id}'])).toContain('patch');
  });
});
