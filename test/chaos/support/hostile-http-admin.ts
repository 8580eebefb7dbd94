import {
  FLOW_LIMIT_RANGES,
  LANE_SETTING_RANGES,
  PRIORITY_MAX,
  RECENT_COMPLETED_MAX,
  SCHEDULE_LIST_MAX,
  SCHEDULE_RANGES,
} from '@app/echomq/internal';
import fc from 'fast-check';
import {
  badLaneName,
  badQueueName,
  badScheduleKey,
  json,
  nonEmptyNotJson,
  notAnIntegerIn,
  notJson,
  queryOf,
  unknownKeyBesides,
  withExtraKey,
} from '../../api/support/generators';
import type { RawRequest } from '../../api/support/raw-http';
import { post, type HttpCase, type Seeded } from './hostile-http-jobs';

/**
 * Malformed requests to the api's queue-level routes: pause, lanes, limits, schedules and
 * history; a bad queue name on every route; routes that do not exist; huge values; and, since
 * the scenario's api requires a bearer token, requests without the right one.
 */

/** A limit or lane setting that is wrong: null clears one, so it is not among these. */
const badSetting = (min: number, max: number): fc.Arbitrary<unknown> =>
  notAnIntegerIn(min, max).filter((value) => value !== null);

const put = (path: string, body: string): RawRequest => ({ method: 'PUT', path, body });
const of =
  (family: string) =>
  (req: RawRequest): HttpCase => ({ family, req });

/** Characters a cron pattern never has, so these can never parse. */
const badCron = fc.oneof(
  fc.constantFrom('not a cron', '* * *', '61 * * * *', '* * * * * * * *', '@nope', '0 3 * * * extra words'),
  fc.string({ minLength: 1, maxLength: 20 }).map((text) => `!${text}`),
);
const badTz = fc.oneof(
  fc.constantFrom('Mars/Olympus', 'UTC+99', 'Europe/Nowhere'),
  fc.stringMatching(/^[A-Za-z]{1,12}$/).map((text) => `Nowhere/${text}`),
);

export function adminCases(seed: Seeded, token: string): fc.Arbitrary<HttpCase> {
  const base = `/queues/${seed.queue}`;
  const queueRoutes = (q: string): RawRequest[] => [
    { method: 'GET', path: `/queues/${q}` },
    { method: 'POST', path: `/queues/${q}/pause` },
    { method: 'POST', path: `/queues/${q}/resume` },
    { method: 'GET', path: `/queues/${q}/jobs` },
    post(`/queues/${q}/jobs`, '{"data":1}'),
    post(`/queues/${q}/jobs/bulk`, '{"jobs":[{"data":1}]}'),
    { method: 'GET', path: `/queues/${q}/jobs/${seed.pendingId}` },
    { method: 'DELETE', path: `/queues/${q}/jobs/${seed.pendingId}` },
    { method: 'GET', path: `/queues/${q}/lanes` },
    put(`/queues/${q}/lanes/vip`, '{"weight":2}'),
    { method: 'GET', path: `/queues/${q}/limits` },
    put(`/queues/${q}/limits`, '{"globalConcurrency":2}'),
    { method: 'GET', path: `/queues/${q}/schedules` },
    put(`/queues/${q}/schedules/k`, '{"everyMs":60000}'),
    { method: 'GET', path: `/queues/${q}/completed` },
    post(`/queues/${q}/drain`, '{}'),
    post(`/queues/${q}/obliterate`, ''),
  ];
  const badQueue = fc
    .tuple(
      fc.oneof(
        badQueueName,
        fc.integer({ min: 65, max: 6_000 }).map((n) => 'q'.repeat(n)),
      ),
      fc.nat(),
    )
    .map(([name, n]) => {
      const routes = queueRoutes(encodeURIComponent(name));
      return routes[n % routes.length];
    });
  const pause = fc.constantFrom('pause', 'resume').chain((verb) =>
    badQueueName.map((q): RawRequest => ({
      method: 'POST',
      path: `/queues/${encodeURIComponent(q)}/${verb}`,
    })),
  );
  const lanes = fc.oneof(
    fc.tuple(badLaneName, fc.constantFrom('pause', 'resume', '')).map(([lane, verb]): RawRequest => {
      const path = `${base}/lanes/${encodeURIComponent(lane)}`;
      return verb ? { method: 'POST', path: `${path}/${verb}` } : put(path, '{"weight":2}');
    }),
    fc
      .oneof(
        badSetting(LANE_SETTING_RANGES.weight.min, LANE_SETTING_RANGES.weight.max).map((weight) =>
          json({ weight }),
        ),
        badSetting(LANE_SETTING_RANGES.concurrency.min, LANE_SETTING_RANGES.concurrency.max).map(
          (concurrency) => json({ concurrency }),
        ),
        fc
          .tuple(unknownKeyBesides(new Set(['weight', 'concurrency'])), fc.integer())
          .map(([k, v]) => withExtraKey({ weight: 2 }, k, v)),
        nonEmptyNotJson,
      )
      .map((body) => put(`${base}/lanes/vip`, body)),
  );
  const rateLimit = fc.oneof(
    fc.oneof(fc.integer(), fc.string(), fc.array(fc.integer(), { maxLength: 2 }), fc.boolean()),
    fc.constant({}),
    badSetting(FLOW_LIMIT_RANGES.rateMax.min, FLOW_LIMIT_RANGES.rateMax.max).map((max) => ({
      max,
      windowMs: 1000,
    })),
    badSetting(FLOW_LIMIT_RANGES.rateWindowMs.min, FLOW_LIMIT_RANGES.rateWindowMs.max).map((windowMs) => ({
      max: 5,
      windowMs,
    })),
    fc.constant({ max: 5, windowMs: 1000, burst: 2 }),
  );
  const limits = fc
    .oneof(
      fc
        .tuple(fc.constantFrom('rateLimit', 'laneRateLimit'), rateLimit)
        .map(([field, value]) => json({ [field]: value })),
      badSetting(FLOW_LIMIT_RANGES.globalConcurrency.min, FLOW_LIMIT_RANGES.globalConcurrency.max).map(
        (value) => json({ globalConcurrency: value }),
      ),
      badSetting(FLOW_LIMIT_RANGES.laneConcurrency.min, FLOW_LIMIT_RANGES.laneConcurrency.max).map((value) =>
        json({ laneConcurrency: value }),
      ),
      fc
        .tuple(
          unknownKeyBesides(new Set(['rateLimit', 'globalConcurrency', 'laneConcurrency', 'laneRateLimit'])),
          fc.integer(),
        )
        .map(([k, v]) => withExtraKey({ globalConcurrency: 2 }, k, v)),
      nonEmptyNotJson,
    )
    .map((body) => put(`${base}/limits`, body));
  const template = fc.oneof(
    fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 })),
    // An array is no template, even an empty one (nested validation walks its elements: none).
    fc.constant([]),
    notAnIntegerIn(1, 1_000_000).map((maxAttempts) => ({ maxAttempts })),
    notAnIntegerIn(0, PRIORITY_MAX).map((priority) => ({ priority })),
    badLaneName.map((lane) => ({ lane })),
    fc.constant({ name: 'n'.repeat(129) }),
    fc.constant({ backoff: { type: 'custom' } }),
    fc.constant({ data: 'z'.repeat(seed.payloadLimit + 10) }),
    fc.constant({ data: 1, color: 'red' }),
  );
  const scheduleBody = fc.oneof(
    badCron.map((cron) => ({ cron })),
    badTz.map((tz) => ({ cron: '0 3 * * *', tz })),
    notAnIntegerIn(SCHEDULE_RANGES.everyMs.min, SCHEDULE_RANGES.everyMs.max).map((everyMs) => ({ everyMs })),
    fc.constant({ cron: '0 3 * * *', everyMs: 1000 }),
    fc.constantFrom({}, { missed: 'once' }, { tz: 'UTC' }),
    fc
      .string()
      .filter((m) => m !== 'once' && m !== 'skip')
      .map((missed) => ({ everyMs: 60_000, missed })),
    notAnIntegerIn(SCHEDULE_RANGES.missedAfterMs.min, SCHEDULE_RANGES.missedAfterMs.max).map(
      (missedAfterMs) => ({ everyMs: 60_000, missedAfterMs }),
    ),
    template.map((t) => ({ everyMs: 60_000, template: t })),
    fc.constant({ everyMs: 60_000, color: 'red' }),
  );
  const schedules = fc.oneof(
    fc
      .tuple(scheduleBody, fc.constantFrom(seed.scheduleKey, 'fresh'))
      .map(([body, key]) => put(`${base}/schedules/${key}`, json(body))),
    notJson.map((body) => put(`${base}/schedules/${seed.scheduleKey}`, body)),
    fc.tuple(badScheduleKey, fc.constantFrom('GET', 'PUT', 'DELETE')).map(([key, method]): RawRequest => {
      const path = `${base}/schedules/${encodeURIComponent(key)}`;
      return method === 'PUT' ? put(path, '{"everyMs":60000}') : { method, path };
    }),
    fc
      .constantFrom('GET', 'DELETE')
      .map((method): RawRequest => ({ method, path: `${base}/schedules/no-such-key` })),
    fc
      .oneof(
        fc
          .oneof(fc.integer({ max: 0 }), fc.integer({ min: SCHEDULE_LIST_MAX + 1 }))
          .map((n) => [['limit', String(n)]] as const),
        fc.constantFrom('', 'a'.repeat(129)).map((after) => [['after', after]] as const),
        fc.constant([['color', 'red']] as const),
      )
      .map((params): RawRequest => ({ method: 'GET', path: `${base}/schedules?${queryOf(params)}` })),
  );
  const history = fc
    .oneof(
      fc.oneof(fc.integer({ max: 0 }), fc.integer({ min: RECENT_COMPLETED_MAX + 1 })).map(String),
      fc.string({ minLength: 1, maxLength: 8 }).filter((s) => !/^\d+$/.test(s)),
    )
    .map((limit): RawRequest => ({
      method: 'GET',
      path: `${base}/completed?${queryOf([['limit', limit]])}`,
    }));
  const routes = fc.constantFrom<RawRequest>(
    { method: 'PUT', path: `${base}/jobs`, body: '{"data":1}' },
    { method: 'PATCH', path: base, body: '{}' },
    { method: 'POST', path: base },
    { method: 'DELETE', path: base },
    { method: 'GET', path: `${base}/jobs/${seed.pendingId}/x` },
    { method: 'DELETE', path: `${base}/limits` },
    { method: 'POST', path: `${base}/lanes` },
    { method: 'POST', path: '/nope' },
    { method: 'GET', path: '/queues/a/b/c/d/e/f' },
  );
  // Deeply nested arrays where a number belongs: parsed, then refused by type.
  const huge = fc.oneof(
    fc
      .integer({ min: 100, max: 3_000 })
      .map((depth) => post(`${base}/jobs`, `{"data":1,"delayMs":${'['.repeat(depth)}${']'.repeat(depth)}}`)),
    fc
      .constantFrom('1e308', '123456789012345678901234567890', '-0.0000001', '1e-320')
      .map((n) => post(`${base}/jobs`, `{"data":1,"priority":${n}}`)),
    fc
      .integer({ min: 1_000, max: 6_000 })
      .map((n): RawRequest => ({ method: 'GET', path: `${base}/jobs/${'J'.repeat(n)}` })),
  );
  const auth = fc
    .tuple(
      fc.constantFrom(
        undefined,
        '',
        'Bearer',
        'Bearer wrong',
        `Bearer ${token}x`,
        `Basic ${token}`,
        `Token ${token}`,
      ),
      fc.constantFrom<RawRequest>(
        { method: 'GET', path: base },
        post(`${base}/jobs`, '{"data":1}'),
        post(`${base}/pause`, ''),
      ),
    )
    .map(([authorization, req]): RawRequest => ({
      ...req,
      // Headers of its own replace the scenario's token; none at all is the missing-token case.
      headers: authorization === undefined ? {} : { authorization },
    }));
  return fc.oneof(
    badQueue.map(of('bad queue name')),
    pause.map(of('pause')),
    lanes.map(of('lanes')),
    limits.map(of('limits')),
    schedules.map(of('schedules')),
    history.map(of('history')),
    routes.map(of('no such route')),
    huge.map(of('huge values')),
    auth.map(of('auth')),
  );
}
