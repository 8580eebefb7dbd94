import {
  ENQUEUE_MANY_MAX as BULK_MAX,
  isJobId,
  isValidLaneName,
  isValidQueueName,
  JOB_IDS,
  STATE_SETS,
} from '@app/echomq/internal';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { MAX_DELAY_MS } from '../../apps/api/src/queues/dto/enqueue-job.dto';
import { RUN_AT_MAX_MS, runAtToMs } from '../../apps/api/src/queues/dto/validators';
import { RedisServer } from '../support/redis-server';
import { keyDump, startApi, type RunningApi } from './support/api';
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

const json = (value: unknown): string => JSON.stringify(value);
const post = (path: string, body: string, contentType?: string): RawRequest => ({
  method: 'POST',
  path,
  body,
  ...(contentType ? { contentType } : {}),
});

// --- values -----------------------------------------------------------------------------

/** A small, always-valid payload (well under the payload limit, no reserved keys). */
const payload = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 20 }),
  fc.constant(null),
  fc.dictionary(fc.stringMatching(/^[a-z]{1,5}$/), fc.integer(), { maxKeys: 3 }),
);
const validItem = payload.map((data) => ({ data }));

const notAnInteger = fc.oneof(
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)),
);
const notAString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.string(), { maxKeys: 2 }),
);
const notARunAt = fc.oneof(
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.string({ maxLength: 30 }).filter((text) => runAtToMs(text) === undefined),
  fc.constantFrom('2030-01-01', '2030-01-01T00:00:00', '2030-02-30T00:00:00Z', '1969-12-31T23:59:59Z'),
  fc.integer({ max: -1 }),
  fc.integer({ min: RUN_AT_MAX_MS + 1, max: Number.MAX_SAFE_INTEGER }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)),
);

/** One field of an enqueue item set to a wrong type or an out-of-range value. */
const badField: fc.Arbitrary<[string, unknown]> = fc.oneof(
  fc.tuple(fc.constantFrom('delayMs', 'maxAttempts'), notAnInteger),
  fc.tuple(fc.constantFrom('name', 'idempotencyKey'), notAString),
  fc.tuple(fc.constant('runAt'), notARunAt),
  fc.tuple(
    fc.constant('delayMs'),
    fc.oneof(fc.integer({ max: -1 }), fc.integer({ min: MAX_DELAY_MS + 1, max: Number.MAX_SAFE_INTEGER })),
  ),
  fc.tuple(
    fc.constant('maxAttempts'),
    fc.oneof(fc.integer({ max: 0 }), fc.integer({ min: 1_000_001, max: 2 ** 40 })),
  ),
  fc.tuple(fc.constant('name'), fc.string({ minLength: 129, maxLength: 300 })),
  fc.tuple(
    fc.constant('idempotencyKey'),
    fc.oneof(fc.constant(''), fc.string({ minLength: 257, maxLength: 400 })),
  ),
  // Not a lane name: not a string, or a string outside the keyspace's lane rule.
  fc.tuple(
    fc.constant('lane'),
    fc.oneof(
      notAString,
      fc.string({ maxLength: 80 }).filter((text) => !isValidLaneName(text)),
    ),
  ),
  fc.tuple(
    fc.constant('priority'),
    fc.oneof(notAnInteger, fc.integer({ max: -1 }), fc.integer({ min: 10, max: 2 ** 40 })),
  ),
  fc.tuple(
    fc.constant('timeoutMs'),
    fc.oneof(notAnInteger, fc.integer({ max: 0 }), fc.integer({ min: 604_800_001, max: 2 ** 40 })),
  ),
  // A job's own backoff that is not a fixed or exponential policy in range.
  fc.tuple(
    fc.constant('backoff'),
    fc.oneof(
      fc.constant(null),
      fc
        .jsonValue({ maxDepth: 1 })
        .filter((value) => typeof value !== 'object' || value === null || Array.isArray(value)),
      fc.record({ type: fc.constantFrom('custom', 'linear', '') }),
      fc.record({ type: fc.constant('fixed'), delayMs: fc.oneof(fc.integer({ max: -1 }), fc.constant(1.5)) }),
    ),
  ),
);

const KNOWN_FIELDS = new Set([
  'name',
  'data',
  'delayMs',
  'runAt',
  'maxAttempts',
  'idempotencyKey',
  'backoff',
  'lane',
  'priority',
  'timeoutMs',
]);
const unknownKey = fc.oneof(
  fc.string({ minLength: 1, maxLength: 20 }).filter((key) => !KNOWN_FIELDS.has(key)),
  // Names class-transformer or Nest would silently drop rather than report.
  fc.constantFrom('toString', 'hasOwnProperty', 'valueOf', '__proto__', 'constructor', 'prototype', 'jobs'),
);

/** An enqueue item with exactly one thing wrong with it, as JSON text (so "__proto__" survives). */
const badItemJson: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(validItem, badField).map(([item, [key, value]]) => json({ ...item, [key]: value })),
  fc
    .tuple(validItem, unknownKey, fc.jsonValue({ maxDepth: 1 }))
    .map(([item, key, value]) => `${json(item).slice(0, -1)},${json(key)}:${json(value) ?? 'null'}}`),
  // data missing (other fields valid)
  fc.record({ name: fc.string({ maxLength: 10 }), delayMs: fc.nat(1000) }).map(json),
);

const badQueueName = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 80 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }),
    fc.constantFrom(
      'a'.repeat(65),
      'a:b',
      'a{b}',
      '{x}',
      'a b',
      'ä',
      'a/b',
      'a*',
      'a?b',
      'a\u0000',
      '%',
      ' ',
    ),
  )
  .filter((name) => !isValidQueueName(name));

const validIdOf = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((n) => JOB_IDS.format(n));
const badJobId = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 30 }),
    fc.constantFrom(
      'JOB',
      'JOB123',
      'job0Ah3kPz9QwE',
      'JOX0Ah3kPz9QwE',
      'JOB0Ah3kPz9QwE0',
      'JOBzzzzzzzzzzz',
      '..',
      '.',
      'bulk',
    ),
    // A valid id with one character replaced by one outside the alphabet.
    fc
      .tuple(validIdOf, fc.integer({ min: 3, max: 13 }), fc.constantFrom('-', '_', '.', '~', ' ', 'é', '+'))
      .map(([id, at, char]) => id.slice(0, at) + char + id.slice(at + 1)),
  )
  .filter((id) => !isJobId(id));

const notJson = fc.oneof(
  fc.string({ maxLength: 60 }).filter((text) => {
    try {
      JSON.parse(text);
      return false;
    } catch {
      return true;
    }
  }),
  // A valid body cut short.
  fc
    .tuple(validItem, fc.nat())
    .map(([item, cut]) => json(item).slice(0, cut % json(item).length))
    .filter((text) => text.length > 0),
  // JSON, but not an object or array at the top (the parser is strict).
  fc.constantFrom('1', '"text"', 'true', 'null'),
);

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
  const query = (params: [string, string][]): string =>
    params.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&');
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
            unknownKey.filter((key) => key !== 'jobs'),
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
        req: { method: 'GET', path: `${jobs}?${query(params)}` },
        expect: [400],
      })),
    fc
      .tuple(
        validIdOf.filter((id) => id !== seedId),
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
});
