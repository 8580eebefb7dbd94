import {
  FLOW_LIMIT_RANGES,
  isValidLaneName,
  LANE_SETTING_RANGES,
  QUEUE_OPTION_RANGES,
  throttleJob,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { LANE_NAME_PATTERN } from '../../apps/api/src/queues/api-params';
import { serverNowMs } from '../support/assertions';
import { claimSome } from '../support/claims';
import { connect, scriptContext, uniqueQueue } from '../support/redis';
import { keyDump, queuePattern, startApi, type RunningApi } from './support/api';

/** Lanes, priorities, timeouts and flow limits over real HTTP, against the suite's Redis. */
describe('api: lanes, priorities and limits over HTTP', () => {
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
    queue = uniqueQueue('lanes');
  });

  const http = () => request(api.url);
  const enqueue = async (body: object): Promise<string> => {
    const res = await http().post(`/queues/${queue}/jobs`).send(body).expect(201);
    return res.body.id as string;
  };
  const listedIds = async (query: Record<string, string | number>): Promise<string[]> => {
    const res = await http().get(`/queues/${queue}/jobs`).query(query).expect(200);
    return (res.body.jobs as { id: string }[]).map((job) => job.id);
  };
  const lanes = async (): Promise<object[]> =>
    (await http().get(`/queues/${queue}/lanes`).expect(200)).body.lanes as object[];
  /** The request must be a 400 whose message names `field`, and must leave the queue's keys as they were. */
  const refused = async (send: () => request.Test, field: string): Promise<void> => {
    const before = await keyDump(redis, queuePattern(queue));
    const res = await send().expect(400);
    expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(JSON.stringify(res.body.message)).toContain(field);
    expect(await keyDump(redis, queuePattern(queue))).toEqual(before);
  };

  it('enqueues into lanes at priorities, shows them on the job, and lists the lanes with their depths', async () => {
    const vipLow = await enqueue({ data: 1, lane: 'vip' });
    const vipHigh = await enqueue({ data: 2, lane: 'vip', priority: 5 });
    const plain = await enqueue({ data: 3 });
    const timed = await enqueue({ data: 4, lane: 'tenant:a@example.com', priority: 9, timeoutMs: 30_000 });

    const high = await http().get(`/queues/${queue}/jobs/${vipHigh}`).expect(200);
    expect(high.body).toMatchObject({ id: vipHigh, state: 'pending', lane: 'vip', priority: 5 });
    const none = await http().get(`/queues/${queue}/jobs/${plain}`).expect(200);
    expect(none.body).toMatchObject({ lane: 'default', priority: 0 });
    expect(none.body.timeoutMs).toBeUndefined();
    expect((await http().get(`/queues/${queue}/jobs/${timed}`)).body).toMatchObject({ timeoutMs: 30_000 });

    const idle = { active: 0, paused: false, held: false, weight: 1, concurrency: null };
    expect(await lanes()).toEqual([
      { lane: 'default', pending: 1, ...idle },
      { lane: 'tenant:a@example.com', pending: 1, ...idle },
      { lane: 'vip', pending: 2, ...idle },
    ]);
    expect((await http().get(`/queues/${queue}`).expect(200)).body.counts.pending).toBe(4);

    // A lane, then one priority level of it; the unfiltered listing merges every lane.
    expect(await listedIds({ lane: 'vip' })).toEqual(expect.arrayContaining([vipLow, vipHigh]));
    expect(await listedIds({ lane: 'vip' })).toHaveLength(2);
    expect(await listedIds({ state: 'pending', lane: 'vip', priority: 5 })).toEqual([vipHigh]);
    expect(await listedIds({ lane: 'vip', priority: 0 })).toEqual([vipLow]);
    expect(await listedIds({ lane: 'default' })).toEqual([plain]);
    // A level without a lane: that level's jobs of every lane.
    expect(await listedIds({ priority: 5 })).toEqual([vipHigh]);
    expect(await listedIds({})).toHaveLength(4);
  });

  it("treats lane 'default' as no lane", async () => {
    const id = await enqueue({ data: 1, lane: 'default' });
    expect((await http().get(`/queues/${queue}/jobs/${id}`)).body).toMatchObject({
      lane: 'default',
      priority: 0,
    });
    expect(await lanes()).toEqual([expect.objectContaining({ lane: 'default', pending: 1 })]);
  });

  it('enqueues lanes and priorities in bulk', async () => {
    const res = await http()
      .post(`/queues/${queue}/jobs/bulk`)
      .send({ jobs: [{ data: 'a', lane: 'x' }, { data: 'b', lane: 'y', priority: 2 }, { data: 'c' }] })
      .expect(201);
    const [, b] = res.body.ids as string[];
    expect((await http().get(`/queues/${queue}/jobs/${b}`)).body).toMatchObject({ lane: 'y', priority: 2 });
    expect((await lanes()).map((lane) => (lane as { lane: string }).lane)).toEqual(['default', 'x', 'y']);
  });

  it('pauses and resumes one lane, answering like the queue pause route', async () => {
    await enqueue({ data: 1, lane: 'vip' });
    await enqueue({ data: 2, lane: 'bulk' });

    const paused = await http().post(`/queues/${queue}/lanes/vip/pause`).expect(200);
    expect(paused.body).toEqual({ queue, lane: 'vip', paused: true });
    // Pausing twice is fine: the call is idempotent.
    await http().post(`/queues/${queue}/lanes/vip/pause`).expect(200);
    const byName = async () =>
      new Map((await lanes()).map((lane) => [(lane as { lane: string }).lane, lane]));
    expect((await byName()).get('vip')).toMatchObject({ paused: true, pending: 1 });
    expect((await byName()).get('bulk')).toMatchObject({ paused: false, pending: 1 });
    // The queue itself is not paused, and enqueue into the paused lane keeps working.
    expect((await http().get(`/queues/${queue}`)).body.paused).toBe(false);
    await enqueue({ data: 3, lane: 'vip' });
    expect((await byName()).get('vip')).toMatchObject({ paused: true, pending: 2 });

    const resumed = await http().post(`/queues/${queue}/lanes/vip/resume`).expect(200);
    expect(resumed.body).toEqual({ queue, lane: 'vip', paused: false });
    expect((await byName()).get('vip')).toMatchObject({ paused: false, pending: 2 });
  });

  it('lists a paused lane with no work until it is resumed', async () => {
    await http().post(`/queues/${queue}/lanes/quiet/pause`).expect(200);
    expect(await lanes()).toEqual([expect.objectContaining({ lane: 'quiet', pending: 0, paused: true })]);
    await http().post(`/queues/${queue}/lanes/quiet/resume`).expect(200);
    expect(await lanes()).toEqual([]);
  });

  it("sets a lane's weight and concurrency, and null clears them", async () => {
    await enqueue({ data: 1, lane: 'vip' });
    await http().put(`/queues/${queue}/lanes/vip`).send({ weight: 3, concurrency: 2 }).expect(204);
    expect(await lanes()).toEqual([expect.objectContaining({ lane: 'vip', weight: 3, concurrency: 2 })]);

    // A field left out keeps its value; null clears it (the queue's laneConcurrency then applies).
    await http().put(`/queues/${queue}/limits`).send({ laneConcurrency: 7 }).expect(204);
    await http().put(`/queues/${queue}/lanes/vip`).send({ concurrency: null }).expect(204);
    expect(await lanes()).toEqual([expect.objectContaining({ lane: 'vip', weight: 3, concurrency: 7 })]);
    await http().put(`/queues/${queue}/lanes/vip`).send({ weight: null }).expect(204);
    expect(await lanes()).toEqual([expect.objectContaining({ lane: 'vip', weight: 1, concurrency: 7 })]);
  });

  it('round-trips the flow limits: a field left out is kept, null clears it', async () => {
    const none = { rateLimit: null, globalConcurrency: null, laneConcurrency: null, laneRateLimit: null };
    expect((await http().get(`/queues/${queue}/limits`).expect(200)).body).toEqual(none);

    await http()
      .put(`/queues/${queue}/limits`)
      .send({ rateLimit: { max: 100, windowMs: 1_000 }, laneConcurrency: 2 })
      .expect(204);
    expect((await http().get(`/queues/${queue}/limits`)).body).toEqual({
      ...none,
      rateLimit: { max: 100, windowMs: 1_000 },
      laneConcurrency: 2,
    });

    await http()
      .put(`/queues/${queue}/limits`)
      .send({ rateLimit: null, globalConcurrency: 5, laneRateLimit: { max: 3, windowMs: 60_000 } })
      .expect(204);
    expect((await http().get(`/queues/${queue}/limits`)).body).toEqual({
      rateLimit: null,
      globalConcurrency: 5,
      laneConcurrency: 2,
      laneRateLimit: { max: 3, windowMs: 60_000 },
    });

    // An empty body changes nothing.
    await http().put(`/queues/${queue}/limits`).send({}).expect(204);
    expect((await http().get(`/queues/${queue}/limits`)).body.globalConcurrency).toBe(5);
  });

  it.each([
    ['a lane with a space', { lane: 'bad lane' }, 'lane'],
    ['an empty lane', { lane: '' }, 'lane'],
    ['a lane of 65 characters', { lane: 'x'.repeat(65) }, 'lane'],
    ['a lane with a brace', { lane: 'a{b}' }, 'lane'],
    ['a lane that is not a string', { lane: 7 }, 'lane'],
    ['a null lane', { lane: null }, 'lane'],
    ['priority 10', { priority: 10 }, 'priority'],
    ['priority 1.5', { priority: 1.5 }, 'priority'],
    ['priority -1', { priority: -1 }, 'priority'],
    ['a priority sent as text', { priority: '5' }, 'priority'],
    ['timeoutMs 0', { timeoutMs: 0 }, 'timeoutMs'],
    ['timeoutMs 1.5', { timeoutMs: 1.5 }, 'timeoutMs'],
    ['timeoutMs over seven days', { timeoutMs: 604_800_001 }, 'timeoutMs'],
  ])('refuses %s with a 400 naming the field, enqueueing nothing', async (_case, fields, field) => {
    await refused(
      () =>
        http()
          .post(`/queues/${queue}/jobs`)
          .send({ data: 1, ...fields }),
      field,
    );
    await refused(
      () =>
        http()
          .post(`/queues/${queue}/jobs/bulk`)
          .send({ jobs: [{ data: 0 }, { data: 1, ...fields }] }),
      `jobs.1.${field}`,
    );
    expect((await http().get(`/queues/${queue}`)).body.counts.pending).toBe(0);
  });

  it('refuses a bad lane in the path with a 400 INVALID_ARGUMENT, writing nothing', async () => {
    for (const lane of ['a%20b', 'x'.repeat(65), '%7Bq%7D']) {
      const before = await keyDump(redis, queuePattern(queue));
      const res = await http().post(`/queues/${queue}/lanes/${lane}/pause`).expect(400);
      expect(res.body).toMatchObject({ statusCode: 400, code: 'INVALID_ARGUMENT' });
      await http().put(`/queues/${queue}/lanes/${lane}`).send({ weight: 2 }).expect(400);
      expect(await keyDump(redis, queuePattern(queue))).toEqual(before);
    }
  });

  it.each([
    ['weight 0', { weight: 0 }, 'weight'],
    ['weight 1001', { weight: 1001 }, 'weight'],
    ['weight 1.5', { weight: 1.5 }, 'weight'],
    ['concurrency 0', { concurrency: 0 }, 'concurrency'],
    ['concurrency as text', { concurrency: '2' }, 'concurrency'],
    ['an unknown setting', { share: 2 }, 'share'],
  ])('refuses lane settings with %s, writing nothing', async (_case, body, field) => {
    await refused(() => http().put(`/queues/${queue}/lanes/vip`).send(body), field);
  });

  it.each([
    ['a rate max of 0', { rateLimit: { max: 0, windowMs: 1_000 } }, 'rateLimit.max'],
    ['a rate window of 1.5', { rateLimit: { max: 1, windowMs: 1.5 } }, 'rateLimit.windowMs'],
    [
      'a rate window over a day',
      { laneRateLimit: { max: 1, windowMs: 86_400_001 } },
      'laneRateLimit.windowMs',
    ],
    ['a rate limit without its window', { rateLimit: { max: 1 } }, 'rateLimit.windowMs'],
    [
      'a rate limit with an unknown field',
      { rateLimit: { max: 1, windowMs: 10, burst: 2 } },
      'rateLimit.burst',
    ],
    ['a rate limit that is a number', { laneRateLimit: 5 }, 'laneRateLimit'],
    ['globalConcurrency 0', { globalConcurrency: 0 }, 'globalConcurrency'],
    ['laneConcurrency 1.5', { laneConcurrency: 1.5 }, 'laneConcurrency'],
    ['an unknown limit', { burst: 1 }, 'burst'],
  ])('refuses limits with %s, leaving the stored limits as they were', async (_case, body, field) => {
    await http().put(`/queues/${queue}/limits`).send({ globalConcurrency: 4 }).expect(204);
    await refused(() => http().put(`/queues/${queue}/limits`).send(body), field);
    expect((await http().get(`/queues/${queue}/limits`)).body).toMatchObject({
      rateLimit: null,
      globalConcurrency: 4,
    });
  });

  it('lists a lane with a + in its name when the query string sends it as %2B', async () => {
    const id = await enqueue({ data: 1, lane: 'a+b' });
    expect(await listedIds({ lane: 'a+b' })).toEqual([id]);
    // Sent bare, a + in a query string is a space: a name no lane can have.
    await refused(() => http().get(`/queues/${queue}/jobs?lane=a+b`), 'lane');
    // In the path it stays a +.
    await http().post(`/queues/${queue}/lanes/a+b/pause`).expect(200);
    expect(await lanes()).toEqual([expect.objectContaining({ lane: 'a+b', paused: true })]);
  });

  it("shows the queue's hold and the lanes' holds a handler's RateLimitedError left", async () => {
    const none = (await http().get(`/queues/${queue}`).expect(200)).body as { heldUntil: unknown };
    expect(none.heldUntil).toBeNull();
    expect((await http().get(`/queues/${queue}/lanes`).expect(200)).body.holds).toEqual({});

    await enqueue({ data: 1, lane: 'vip' });
    await enqueue({ data: 2 });
    const ctx = scriptContext(redis, queue);
    const claimed = await claimSome(ctx, 2);
    const vip = claimed.find((job) => job.lane === 'vip')!;
    const plain = claimed.find((job) => job.lane === 'default')!;
    const before = await serverNowMs(redis);
    await throttleJob(ctx, vip, 30_000, 'lane');
    await throttleJob(ctx, plain, 60_000, 'queue');

    const detail = (await http().get(`/queues/${queue}`).expect(200)).body as { heldUntil: string };
    expect(Date.parse(detail.heldUntil)).toBeGreaterThanOrEqual(before + 59_000);
    expect(new Date(detail.heldUntil).toISOString()).toBe(detail.heldUntil);
    const listed = (await http().get(`/queues/${queue}/lanes`).expect(200)).body as {
      lanes: object[];
      holds: Record<string, string>;
    };
    expect(Object.keys(listed.holds)).toEqual(['vip']);
    expect(Date.parse(listed.holds.vip)).toBeGreaterThanOrEqual(before + 30_000);
    expect(listed.lanes).toEqual(
      expect.arrayContaining([expect.objectContaining({ lane: 'vip', pending: 1, held: true })]),
    );
  });

  it('refuses lane and priority filters where they mean nothing', async () => {
    await refused(() => http().get(`/queues/${queue}/jobs?state=dead&lane=vip`), 'lane');
    await refused(() => http().get(`/queues/${queue}/jobs?state=active&priority=1&lane=vip`), 'priority');
    await refused(() => http().get(`/queues/${queue}/jobs?priority=3&state=schedule`), 'priority');
    await refused(() => http().get(`/queues/${queue}/jobs?lane=vip&priority=10`), 'priority');
    await refused(() => http().get(`/queues/${queue}/jobs?lane=vip&priority=1.5`), 'priority');
    await refused(() => http().get(`/queues/${queue}/jobs?lane=a%20b`), 'lane');
  });

  it('documents the lane and limit routes in the OpenAPI document', async () => {
    const doc = await http().get('/docs-json').expect(200);
    const paths = doc.body.paths as Record<string, Record<string, unknown>>;
    expect(Object.keys(paths['/queues/{queue}/lanes'])).toEqual(['get']);
    expect(Object.keys(paths['/queues/{queue}/lanes/{lane}'])).toEqual(['put']);
    expect(paths['/queues/{queue}/lanes/{lane}/pause']).toHaveProperty('post');
    expect(paths['/queues/{queue}/lanes/{lane}/resume']).toHaveProperty('post');
    expect(Object.keys(paths['/queues/{queue}/limits']).sort()).toEqual(['get', 'put']);
    const enqueueFields = Object.keys(doc.body.components.schemas.EnqueueJobDto.properties as object);
    expect(enqueueFields).toEqual(expect.arrayContaining(['lane', 'priority', 'timeoutMs']));
  });

  it("documents the library's ranges, and a lane pattern that agrees with the library's rule", async () => {
    const schemas = (await http().get('/docs-json').expect(200)).body.components.schemas as Record<
      string,
      { properties: Record<string, { minimum?: number; maximum?: number }> }
    >;
    const range = (schema: string, field: string) => {
      const { minimum, maximum } = schemas[schema].properties[field];
      return { min: minimum, max: maximum };
    };
    expect(range('FlowLimitsDto', 'globalConcurrency')).toEqual(FLOW_LIMIT_RANGES.globalConcurrency);
    expect(range('FlowLimitsDto', 'laneConcurrency')).toEqual(FLOW_LIMIT_RANGES.laneConcurrency);
    expect(range('LaneSettingsDto', 'weight')).toEqual(LANE_SETTING_RANGES.weight);
    expect(range('LaneSettingsDto', 'concurrency')).toEqual(LANE_SETTING_RANGES.concurrency);
    expect(range('RateLimitDto', 'max')).toEqual(FLOW_LIMIT_RANGES.rateMax);
    expect(range('RateLimitDto', 'windowMs')).toEqual(FLOW_LIMIT_RANGES.rateWindowMs);
    expect(range('EnqueueJobDto', 'timeoutMs')).toEqual(QUEUE_OPTION_RANGES.timeoutMs);
    expect(range('EnqueueJobDto', 'maxAttempts')).toEqual(QUEUE_OPTION_RANGES.maxAttempts);

    const pattern = new RegExp(LANE_NAME_PATTERN);
    const names = [
      'a',
      'tenant-42',
      'a@b.c:x+y=z_1.2',
      'x'.repeat(64),
      'x'.repeat(65),
      '',
      'a b',
      'a{b}',
      'é',
    ];
    for (const name of names) expect([name, pattern.test(name)]).toEqual([name, isValidLaneName(name)]);
  });
});
