import type { Redis } from 'ioredis';
import request from 'supertest';
import { completeJobs } from '@app/echomq/internal';
import { claimSome } from '../support/claims';
import { connect, scriptContext, uniqueQueue } from '../support/redis';
import { keyDump, queuePattern, startApi, type RunningApi } from './support/api';

/** GET /queues/:queue/completed: recently completed jobs over real HTTP, against the suite's Redis. */
describe('api: recently completed jobs', () => {
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
    queue = uniqueQueue('history');
  });

  const http = () => request(api.url);

  /** Enqueues over HTTP, then claims and completes each job on its own, in order, with these results. */
  async function completeInOrder(results: unknown[]): Promise<string[]> {
    const ctx = scriptContext(redis, queue);
    const ids: string[] = [];
    for (const result of results) {
      const res = await http().post(`/queues/${queue}/jobs`).send({ data: {} }).expect(201);
      ids.push(res.body.id as string);
      const [job] = await claimSome(ctx, 1);
      await completeJobs(
        ctx,
        [{ claim: job, result: result === undefined ? '' : JSON.stringify(result) }],
        0,
      );
    }
    return ids;
  }

  it('lists them newest first with their results, up to limit', async () => {
    const ids = await completeInOrder([{ sent: true }, 'ok', undefined]);
    const res = await http().get(`/queues/${queue}/completed`).expect(200);
    expect(res.body.jobs.map((job: { id: string }) => job.id)).toEqual([...ids].reverse());
    expect(res.body.jobs[0]).toEqual({ id: ids[2], completedAt: expect.any(String) });
    expect(res.body.jobs[1]).toMatchObject({ id: ids[1], result: 'ok' });
    expect(res.body.jobs[2]).toMatchObject({ id: ids[0], result: { sent: true } });
    expect(new Date(res.body.jobs[0].completedAt).toISOString()).toBe(res.body.jobs[0].completedAt);

    const one = await http().get(`/queues/${queue}/completed`).query({ limit: 1 }).expect(200);
    expect(one.body.jobs.map((job: { id: string }) => job.id)).toEqual([ids[2]]);
  });

  it('answers an empty list for a queue with no completions', async () => {
    expect((await http().get(`/queues/${queue}/completed`).expect(200)).body).toEqual({ jobs: [] });
  });

  it.each(['0', '1001', 'abc', '1.5', '-3'])(
    'refuses limit=%s with a 400 JSON body, writing nothing',
    async (limit) => {
      const before = await keyDump(redis, queuePattern(queue));
      const res = await http().get(`/queues/${queue}/completed`).query({ limit }).expect(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(JSON.stringify(res.body.message)).toContain('limit');
      expect(await keyDump(redis, queuePattern(queue))).toEqual(before);
    },
  );

  it('refuses a malformed queue name with a 400', async () => {
    const res = await http().get('/queues/bad%20name/completed').expect(400);
    expect(res.body).toMatchObject({ statusCode: 400 });
  });

  it('is described in the OpenAPI document', async () => {
    const doc = await http().get('/docs-json').expect(200);
    const op = doc.body.paths?.['/queues/{queue}/completed']?.get;
    expect(op).toBeDefined();
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['queue', 'limit']),
    );
  });
});
