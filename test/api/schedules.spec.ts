import { queueKeys } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { connect, uniqueQueue } from '../support/redis';
import { expectScheduleInvariants } from '../schedules/support/schedule-invariants';
import { keyDump, queuePattern, startApi, type RunningApi } from './support/api';

/** Schedules over real HTTP, against the suite's Redis. */
describe('api: schedules over HTTP', () => {
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
    queue = uniqueQueue('api-sched');
  });
  afterEach(async () => expectScheduleInvariants(redis, queue));

  const http = () => request(api.url);
  const path = (key = '') => `/queues/${queue}/schedules${key === '' ? '' : `/${key}`}`;

  it('creates, reads, lists, changes and removes a schedule', async () => {
    const body = {
      cron: '0 3 * * *',
      tz: 'Europe/Berlin',
      template: { data: { report: 'daily' }, name: 'report' },
    };
    const created = await http().put(path('nightly')).send(body).expect(200);
    expect(created.body).toMatchObject({ outcome: 'created', nextId: expect.stringMatching(/^JOB/) });
    expect(new Date(created.body.nextRunAt as string).getTime()).toBeGreaterThan(Date.now());
    const again = await http().put(path('nightly')).send(body).expect(200);
    expect(again.body).toEqual({ ...created.body, outcome: 'unchanged' });

    const read = await http().get(path('nightly')).expect(200);
    expect(read.body).toEqual({
      key: 'nightly',
      spec: { cron: '0 3 * * *', tz: 'Europe/Berlin' },
      options: { missed: 'once', missedAfterMs: 60_000 },
      template: { data: { report: 'daily' }, name: 'report' },
      nextRunAt: created.body.nextRunAt,
      nextId: created.body.nextId,
    });
    await http().put(path('every')).send({ everyMs: 60_000, missed: 'skip' }).expect(200);
    const listed = await http().get(path()).expect(200);
    expect((listed.body.schedules as { key: string }[]).map((view) => view.key)).toEqual([
      'every',
      'nightly',
    ]);
    const page = await http().get(path()).query({ after: 'every', limit: 1 }).expect(200);
    expect((page.body.schedules as { key: string }[]).map((view) => view.key)).toEqual(['nightly']);

    const changed = await http()
      .put(path('nightly'))
      .send({ ...body, cron: '0 4 * * *' })
      .expect(200);
    expect(changed.body.outcome).toBe('updated');
    expect(await redis.exists(queueKeys(queue).job(created.body.nextId as string))).toBe(0);

    await http().delete(path('nightly')).expect(204);
    await http().delete(path('nightly')).expect(404);
    const missing = await http().get(path('nightly')).expect(404);
    expect(missing.body).toMatchObject({ statusCode: 404 });
    await http().delete(path('every')).expect(204);
  });

  it('answers bad input with a 400 JSON body and writes nothing', async () => {
    const before = await keyDump(redis, queuePattern(queue));
    const bad: object[] = [
      { cron: 'not cron' },
      { cron: '* * * * *', tz: 'Nowhere/Land' },
      { everyMs: 0 },
      { everyMs: 1.5 },
      {},
      { everyMs: 1_000, cron: '* * * * *' },
      { everyMs: 1_000, missed: 'later' },
      { everyMs: 1_000, template: { priority: 99 } },
      { everyMs: 1_000, template: { delayMs: 5 } },
      { everyMs: 1_000, extra: true },
    ];
    for (const body of bad) {
      const res = await http().put(path('k')).send(body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body).toMatchObject({ statusCode: 400 });
    }
    await http().put(path('bad key')).send({ everyMs: 1_000 }).expect(400);
    await http().get(path()).query({ limit: 0 }).expect(400);
    expect(await keyDump(redis, queuePattern(queue))).toEqual(before);
  });

  it('describes every schedule route in OpenAPI', async () => {
    const doc = (await http().get('/docs-json').expect(200)).body as { paths: Record<string, object> };
    const routes = Object.entries(doc.paths).filter(([route]) => route.includes('/schedules'));
    const methods = routes.flatMap(([route, ops]) => Object.keys(ops).map((method) => `${method} ${route}`));
    expect(methods.sort()).toEqual([
      'delete /queues/{queue}/schedules/{key}',
      'get /queues/{queue}/schedules',
      'get /queues/{queue}/schedules/{key}',
      'put /queues/{queue}/schedules/{key}',
    ]);
  });
});
