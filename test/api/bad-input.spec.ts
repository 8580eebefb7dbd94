import { ENQUEUE_MANY_MAX as BULK_MAX, isValidLaneName, STATE_SETS } from '@app/echomq/internal';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { RedisServer } from '../support/redis-server';
import { keyDump, startApi, type RunningApi } from './support/api';
import {
  badItemJson,
  badJobId,
  badQueueName,
  ENQUEUE_FIELDS,
  json,
  notJson,
  queryOf,
  unknownKeyBesides,
  validItem,
  validJobId,
} from './support/generators';
import { RawClient, type RawRequest } from './support/raw-http';

/**
 * A generated batch of malformed requests against a live api. Every one must get a 4xx
 * with a JSON error body, and Redis must be byte-for-byte unchanged afterwards. The api
 * runs on its own redis-server, so DBSIZE and a dump of every key are exact.
 */

const QUEUE = 'seeded';
const BODY_LIMIT = 16 * 1024;
const PAYLOAD_LIMIT = 4096;
const RUNS = 1100;

interface Case {
  readonly category: string;
  readonly req: RawRequest;
  /** Statuses that are right for this case. */
  readonly expect: readonly number[];
}

const post = (path: string, body: string, contentType?: string): RawRequest => ({
  method: 'POST',
  path,
  body,
  ...(contentType ? { contentType } : {}),
});

/** The codes of the EchoMQ errors each category may meet (the api's own refusals have none). */
const LIBRARY_CODES: Readonly<Record<string, readonly string[]>> = {
  'bad queue name': ['INVALID_QUEUE_NAME'],
  'bad job id': ['INVALID_JOB_ID'],
  'bad query': ['INVALID_JOB_ID', 'INVALID_ARGUMENT'],
  'payload over the limit': ['PAYLOAD_TOO_LARGE'],
  'unknown job': ['JOB_NOT_FOUND'],
  'job not dead': ['JOB_STATE'],
  'bad control or schedule input': ['INVALID_ARGUMENT'],
};
/** Categories only EchoMQ refuses, so every answer names its code. */
const ALWAYS_CODED = new Set(['bad job id', 'payload over the limit', 'unknown job', 'job not dead']);

// --- cases ------------------------------------------------------------------------------

function cases(seedId: string): fc.Arbitrary<Case> {
  const jobs = `/queues/${QUEUE}/jobs`;
  const queueRoutes = (q: string): RawRequest[] => [
    { method: 'GET', path: `/queues/${q}` },
    { method: 'GET', path: `/queues/${q}/jobs` },
    post(`/queues/${q}/jobs`, '{"data":1}'),
    post(`/queues/${q}/jobs/bulk`, '{"jobs":[{"data":1}]}'),
    { method: 'POST', path: `/queues/${q}/pause` },
    { method: 'POST', path: `/queues/${q}/resume` },
    { method: 'GET', path: `/queues/${q}/jobs/${seedId}` },
    { method: 'POST', path: `/queues/${q}/jobs/${seedId}/retry` },
    { method: 'DELETE', path: `/queues/${q}/jobs/${seedId}` },
  ];
  const jobRoutes = (id: string): RawRequest[] => [
    { method: 'GET', path: `${jobs}/${id}` },
    { method: 'POST', path: `${jobs}/${id}/retry` },
    { method: 'DELETE', path: `${jobs}/${id}` },
  ];
  const isValidLimit = (text: string) => /^\d{1,7}$/.test(text) && Number(text) >= 1 && Number(text) <= 1000;

  return fc.oneof(
    fc.tuple(badQueueName, fc.nat()).map(([name, pick]) => {
      const routes = queueRoutes(encodeURIComponent(name));
      return { category: 'bad queue name', req: routes[pick % routes.length], expect: [400] };
    }),
    fc.constantFrom('%E0%A4%A', '%', '%ZZ').map((raw) => ({
      category: 'bad queue name',
      req: { method: 'GET', path: `/queues/${raw}/jobs` },
      expect: [400],
    })),
    fc.tuple(badJobId, fc.nat()).map(([id, pick]) => {
      const routes = jobRoutes(encodeURIComponent(id));
      return { category: 'bad job id', req: routes[pick % routes.length], expect: [400] };
    }),
    badItemJson.map((body) => ({ category: 'bad field', req: post(jobs, body), expect: [400] })),
    fc.tuple(fc.array(validItem, { maxLength: 4 }), badItemJson, fc.nat()).map(([good, bad, at]) => {
      const items = good.map(json);
      items.splice(at % (items.length + 1), 0, bad);
      return {
        category: 'bad bulk item',
        req: post(`${jobs}/bulk`, `{"jobs":[${items.join(',')}]}`),
        expect: [400],
      };
    }),
    fc
      .oneof(
        fc
          .oneof(fc.integer(), fc.string(), fc.constant(null), fc.boolean(), fc.constant({ data: 1 }))
          .map((jobs) => ({ jobs })),
        fc.constant({ jobs: [] }),
        fc
          .array(fc.oneof(fc.integer(), fc.string(), fc.constant(null)), { minLength: 1, maxLength: 3 })
          .map((jobs) => ({ jobs })),
        fc
          .integer({ min: BULK_MAX + 1, max: BULK_MAX + 100 })
          .map((n) => ({ jobs: Array.from({ length: n }, () => ({ data: 0 })) })),
        fc.constant({}),
        fc
          .tuple(
            unknownKeyBesides(ENQUEUE_FIELDS).filter((key) => key !== 'jobs'),
            fc.jsonValue({ maxDepth: 1 }),
          )
          .map(
            ([key, value]) =>
              JSON.parse(`{"jobs":[{"data":1}],${json(key)}:${json(value) ?? 'null'}}`) as object,
          ),
      )
      .map((body) => ({ category: 'bad bulk shape', req: post(`${jobs}/bulk`, json(body)), expect: [400] })),
    fc.tuple(notJson, fc.boolean()).map(([body, bulk]) => ({
      category: 'malformed JSON',
      req: post(bulk ? `${jobs}/bulk` : jobs, body),
      expect: [400],
    })),
    fc
      .constantFrom(
        ['text/plain', 400],
        ['application/x-www-form-urlencoded', 400],
        ['application/json; charset=latin-1', 415],
        ['application/json; charset=utf-16', 400],
      )
      .map(([contentType, status]) => ({
        category: 'wrong content type',
        req: post(jobs, '{"data":1}', contentType as string),
        expect: [status as number],
      })),
    fc.tuple(fc.integer({ min: BODY_LIMIT, max: 3 * BODY_LIMIT }), fc.boolean()).map(([size, bulk]) => {
      const item = `{"data":"${'x'.repeat(size)}"}`;
      return {
        category: 'body over the limit',
        req: bulk ? post(`${jobs}/bulk`, `{"jobs":[${item}]}`) : post(jobs, item),
        expect: [413],
      };
    }),
    fc.tuple(fc.integer({ min: PAYLOAD_LIMIT, max: BODY_LIMIT - 100 }), fc.boolean()).map(([size, bulk]) => {
      const item = `{"data":"${'y'.repeat(size)}"}`;
      return {
        category: 'payload over the limit',
        req: bulk ? post(`${jobs}/bulk`, `{"jobs":[{"data":1},${item}]}`) : post(jobs, item),
        expect: [413],
      };
    }),
    fc
      .oneof(
        fc
          .string()
          .filter((state) => !(STATE_SETS as readonly string[]).includes(state))
          .map((s): [string, string][] => [['state', s]]),
        fc
          .oneof(fc.integer({ max: 0 }).map(String), fc.integer({ min: 1001 }).map(String), fc.string())
          .filter((limit) => !isValidLimit(limit))
          .map((l): [string, string][] => [['limit', l]]),
        fc
          .tuple(fc.string({ minLength: 1, maxLength: 10 }), fc.string({ maxLength: 10 }))
          .filter(([key]) => !['state', 'limit', 'after', 'lane', 'priority'].includes(key))
          .map((p): [string, string][] => [p]),
        badJobId.map((id): [string, string][] => [['after', id]]),
        fc
          .string({ maxLength: 80 })
          .filter((lane) => !isValidLaneName(lane))
          .map((lane): [string, string][] => [['lane', lane]]),
        fc
          .string({ maxLength: 10 })
          .filter((level) => !(/^\d{1,7}$/.test(level) && Number(level) <= 9))
          .map((level): [string, string][] => [
            ['lane', 'vip'],
            ['priority', level],
          ]),
        fc.constantFrom('active', 'schedule').map((s): [string, string][] => [
          ['state', s],
          ['after', seedId],
        ]),
        fc.constant<[string, string][]>([
          ['state', 'pending'],
          ['state', 'dead'],
        ]),
      )
      .map((params) => ({
        category: 'bad query',
        req: { method: 'GET', path: `${jobs}?${queryOf(params)}` },
        expect: [400],
      })),
    fc
      .tuple(
        validJobId.filter((id) => id !== seedId),
        fc.nat(),
      )
      .map(([id, pick]) => {
        const routes = jobRoutes(id);
        return { category: 'unknown job', req: routes[pick % routes.length], expect: [404] };
      }),
    fc.constant({
      category: 'job not dead',
      req: { method: 'POST', path: `${jobs}/${seedId}/retry` },
      expect: [409],
    }),
    // Schedules, clean and update refuse what they cannot do before writing anything.
    fc
      .constantFrom<RawRequest>(
        { method: 'PUT', path: `/queues/${QUEUE}/schedules/nightly`, body: '{"cron":"not a cron"}' },
        { method: 'PUT', path: `/queues/${QUEUE}/schedules/nightly`, body: '{"everyMs":0}' },
        {
          method: 'PUT',
          path: `/queues/${QUEUE}/schedules/nightly`,
          body: '{"everyMs":60000,"template":[]}',
        },
        {
          method: 'PUT',
          path: `/queues/${QUEUE}/schedules/nightly`,
          body: '{"cron":"0 3 * * *","tz":"Mars/Olympus"}',
        },
        {
          method: 'PUT',
          path: `/queues/${QUEUE}/schedules/nightly`,
          body: '{"cron":"0 3 * * *","everyMs":1000}',
        },
        post(`/queues/${QUEUE}/clean`, '{"state":"active","olderThanMs":1}'),
        post(`/queues/${QUEUE}/clean`, '{"state":"dead"}'),
        post(`/queues/${QUEUE}/clean`, '{"state":"dead","olderThanMs":-5}'),
        { method: 'PATCH', path: `${jobs}/${seedId}`, body: '{}' },
        { method: 'PATCH', path: `${jobs}/${seedId}`, body: '{"priority":42}' },
        { method: 'PATCH', path: `${jobs}/${seedId}`, body: '{"lane":"no spaces allowed"}' },
      )
      .map((req) => ({ category: 'bad control or schedule input', req, expect: [400] })),
    fc
      .constantFrom<RawRequest>(
        { method: 'PUT', path: jobs, body: '{"data":1}' },
        { method: 'PATCH', path: `/queues/${QUEUE}`, body: '{}' },
        { method: 'POST', path: `/queues/${QUEUE}` },
        { method: 'DELETE', path: `/queues/${QUEUE}` },
        { method: 'GET', path: `${jobs}/${seedId}/x` },
        { method: 'POST', path: '/nope' },
      )
      .map((req) => ({ category: 'no such route', req, expect: [404] })),
  );
}

describe('api: bad input', () => {
  let server: RedisServer;
  let api: RunningApi;
  let redis: Redis;
  let client: RawClient;

  beforeAll(async () => {
    server = await RedisServer.start();
    api = await startApi({
      REDIS_URL: server.url,
      EMQ_BODY_LIMIT: `${BODY_LIMIT}b`,
      EMQ_MAX_PAYLOAD_BYTES: String(PAYLOAD_LIMIT),
      // Far above this batch: the limiter runs but is not what this test is about.
      EMQ_THROTTLE_LIMIT: '1000000',
    });
    redis = new Redis(server.url);
    client = new RawClient(api.url);
  });
  afterAll(async () => {
    client.close();
    await redis.quit();
    await api.close();
    await server.destroy();
  });

  it(`answers ${RUNS} generated malformed requests with a 4xx JSON error and writes nothing`, async () => {
    // Something worth not touching: a pending job (retry -> 409, delete would remove it) and a delayed one.
    const seeded = await client.send(post(`/queues/${QUEUE}/jobs`, '{"data":"seed"}'));
    expect(seeded.status).toBe(201);
    const seedId = (JSON.parse(seeded.text) as { id: string }).id;
    expect(
      (await client.send(post(`/queues/${QUEUE}/jobs`, '{"data":"later","delayMs":600000}'))).status,
    ).toBe(201);

    const sizeBefore = await redis.dbsize();
    const before = await keyDump(redis);
    const seen = new Map<string, number>();

    await fc.assert(
      fc.asyncProperty(cases(seedId), async ({ category, req, expect: statuses }) => {
        const res = await client.send(req);
        seen.set(category, (seen.get(category) ?? 0) + 1);
        const context = `${category}: ${req.method} ${req.path.slice(0, 200)} ${req.body?.slice(0, 200) ?? ''}`;
        // The context rides along so a failure names the request, not just the status.
        expect({ context, status: res.status, ok: statuses.includes(res.status) }).toEqual({
          context,
          status: res.status,
          ok: true,
        });
        expect(res.contentType).toMatch(/^application\/json/);
        const { code, ...body } = JSON.parse(res.text) as Record<string, unknown>;
        const plain = { statusCode: res.status, error: expect.any(String), message: expect.anything() };
        // EchoMQ's errors carry their stable code (and details such as jobId); the api's own refusals do not.
        const codeOk =
          code === undefined
            ? !ALWAYS_CODED.has(category)
            : (LIBRARY_CODES[category]?.includes(code as string) ?? false);
        expect({ context, code, ok: codeOk }).toEqual({ context, code, ok: true });
        if (code === undefined) expect(body).toEqual(plain);
        else expect(body).toMatchObject(plain);
      }),
      { numRuns: RUNS },
    );

    expect(await redis.dbsize()).toBe(sizeBefore);
    expect(await keyDump(redis)).toEqual(before);
    // Every kind of mistake was actually exercised.
    expect([...seen.keys()].sort()).toEqual(
      [
        'bad queue name',
        'bad job id',
        'bad field',
        'bad bulk item',
        'bad bulk shape',
        'malformed JSON',
        'wrong content type',
        'body over the limit',
        'payload over the limit',
        'bad query',
        'unknown job',
        'job not dead',
        'bad control or schedule input',
        'no such route',
      ].sort(),
    );
  });

  it('refuses a schedule template that is not one object, writing nothing', async () => {
    const sizeBefore = await redis.dbsize();
    const before = await keyDump(redis);
    // An array passes ValidateNested (it validates each element), so it needs its own rule.
    for (const template of ['[]', '[{"data":1}]', 'null', '5', '"daily"']) {
      const res = await client.send({
        method: 'PUT',
        path: `/queues/${QUEUE}/schedules/templated`,
        body: `{"everyMs":60000,"template":${template}}`,
      });
      expect({ template, status: res.status }).toEqual({ template, status: 400 });
      expect(JSON.parse(res.text)).toMatchObject({ statusCode: 400, message: expect.anything() });
    }
    expect(await redis.dbsize()).toBe(sizeBefore);
    expect(await keyDump(redis)).toEqual(before);
  });
});
