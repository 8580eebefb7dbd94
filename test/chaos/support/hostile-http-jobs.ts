import {
  BROWSE_MAX,
  CLEAN_AGE_MAX_MS,
  CLEAN_LIMIT_MAX,
  ENQUEUE_MANY_MAX,
  PRIORITY_MAX,
  RETRY_ALL_MAX,
  STATE_SETS,
} from '@app/echomq/internal';
import fc from 'fast-check';
import {
  badItemJson,
  badJobId,
  badLaneName,
  json,
  nonEmptyNotJson,
  notAnInteger,
  notAnIntegerIn,
  notARunAt,
  notAString,
  notJson,
  queryOf,
  unknownKeyBesides,
  validItem,
  validJobId,
  withExtraKey,
} from '../../api/support/generators';
import type { RawRequest } from '../../api/support/raw-http';

/**
 * Malformed requests to the api's job routes: enqueue, bulk, job reads, retry and remove, and
 * job control (drain, clean, obliterate, retry of dead, promote, update). Each is wrong by a
 * rule the api or the library checks before writing, so the only right answer is a 4xx.
 */
export interface HttpCase {
  /** The route family, for the figures. */
  readonly family: string;
  readonly req: RawRequest;
}

/** What the scenario seeded, so malformed requests have real jobs to (not) touch. */
export interface Seeded {
  readonly queue: string;
  /** A pending job: retry and promote of it are refused (it is neither dead nor scheduled). */
  readonly pendingId: string;
  /** Every seeded id: an "unknown id" is none of them. */
  readonly ids: readonly string[];
  readonly scheduleKey: string;
  readonly bodyLimit: number;
  readonly payloadLimit: number;
}

export const post = (path: string, body: string, contentType?: string): RawRequest => ({
  method: 'POST',
  path,
  body,
  ...(contentType ? { contentType } : {}),
});

const of =
  (family: string) =>
  (req: RawRequest): HttpCase => ({ family, req });

export function jobCases(seed: Seeded): fc.Arbitrary<HttpCase> {
  const base = `/queues/${seed.queue}`;
  const jobs = `${base}/jobs`;
  const unknownId = validJobId.filter((id) => !seed.ids.includes(id));
  const writeRoutes = (id: string): RawRequest[] => [
    { method: 'POST', path: `${jobs}/${id}/retry` },
    { method: 'DELETE', path: `${jobs}/${id}` },
    { method: 'POST', path: `${jobs}/${id}/promote` },
    { method: 'PATCH', path: `${jobs}/${id}`, body: '{"priority":1}' },
  ];
  const pick = <T>(list: readonly T[], n: number): T => list[n % list.length];

  const enqueue = fc.oneof(
    badItemJson.map((body) => post(jobs, body)),
    fc.tuple(notJson, fc.boolean()).map(([body, bulk]) => post(bulk ? `${jobs}/bulk` : jobs, body)),
    fc
      .constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'application/json; charset=latin-1',
        'application/json; charset=utf-16',
        'multipart/form-data; boundary=x',
        'application/xml',
      )
      .map((type) => post(jobs, '{"data":1}', type)),
    fc
      .integer({ min: seed.bodyLimit + 1, max: 3 * seed.bodyLimit })
      .map((size) => post(jobs, `{"data":"${'x'.repeat(size)}"}`)),
    fc
      .integer({ min: seed.payloadLimit, max: seed.bodyLimit - 100 })
      .map((size) => post(jobs, `{"data":"${'y'.repeat(size)}"}`)),
  );
  const bulk = fc.oneof(
    fc.tuple(fc.array(validItem, { maxLength: 4 }), badItemJson, fc.nat()).map(([good, bad, at]) => {
      const items = good.map(json);
      items.splice(at % (items.length + 1), 0, bad);
      return post(`${jobs}/bulk`, `{"jobs":[${items.join(',')}]}`);
    }),
    fc
      .oneof(
        fc
          .oneof(fc.integer(), fc.string(), fc.constant(null), fc.boolean(), fc.constant({ data: 1 }))
          .map((list) => ({ jobs: list })),
        fc.constant({ jobs: [] }),
        fc
          .array(fc.oneof(fc.integer(), fc.string(), fc.constant(null)), { minLength: 1, maxLength: 3 })
          .map((list) => ({ jobs: list })),
        fc
          .integer({ min: ENQUEUE_MANY_MAX + 1, max: ENQUEUE_MANY_MAX + 100 })
          .map((n) => ({ jobs: Array.from({ length: n }, () => ({ data: 0 })) })),
        fc.constant({}),
      )
      .map((body) => post(`${jobs}/bulk`, json(body))),
    fc
      .tuple(unknownKeyBesides(new Set(['jobs'])), fc.jsonValue({ maxDepth: 1 }))
      .map(([key, value]) => post(`${jobs}/bulk`, withExtraKey({ jobs: [{ data: 1 }] }, key, value))),
  );
  const reads = fc.oneof(
    badJobId.map((id): RawRequest => ({ method: 'GET', path: `${jobs}/${encodeURIComponent(id)}` })),
    unknownId.map((id): RawRequest => ({ method: 'GET', path: `${jobs}/${id}` })),
    fc
      .oneof(
        fc
          .string()
          .filter((s) => !(STATE_SETS as readonly string[]).includes(s))
          .map((s) => [['state', s]] as const),
        fc
          .oneof(fc.integer({ max: 0 }), fc.integer({ min: BROWSE_MAX + 1 }))
          .map((n) => [['limit', String(n)]] as const),
        fc
          .string({ minLength: 1, maxLength: 8 })
          .filter((s) => !/^\d+$/.test(s))
          .map((s) => [['limit', s]] as const),
        badJobId.map((id) => [['after', id]] as const),
        badLaneName.map((lane) => [['lane', lane]] as const),
        fc.constantFrom('10', '-1', 'x', '1.5', '99999999').map(
          (p) =>
            [
              ['lane', 'vip'],
              ['priority', p],
            ] as const,
        ),
        fc.constantFrom('active', 'schedule', 'dead').map(
          (s) =>
            [
              ['state', s],
              ['lane', 'vip'],
            ] as const,
        ),
        fc.constant([
          ['state', 'pending'],
          ['state', 'dead'],
        ] as const),
        fc
          .tuple(fc.string({ minLength: 1, maxLength: 10 }), fc.string({ maxLength: 10 }))
          .filter(([key]) => !['state', 'limit', 'after', 'lane', 'priority'].includes(key))
          .map((pair) => [pair] as const),
      )
      .map((params) => ({ method: 'GET', path: `${jobs}?${queryOf(params)}` })),
  );
  const retryRemove = fc.oneof(
    fc.tuple(badJobId, fc.nat()).map(([id, n]) => pick(writeRoutes(encodeURIComponent(id)), n)),
    fc.tuple(unknownId, fc.nat()).map(([id, n]) => pick(writeRoutes(id), n)),
    // The pending job is neither dead nor scheduled.
    fc.constantFrom<RawRequest>(
      { method: 'POST', path: `${jobs}/${seed.pendingId}/retry` },
      { method: 'POST', path: `${jobs}/${seed.pendingId}/promote` },
    ),
  );
  const control = fc.oneof(
    fc
      .oneof(
        fc.oneof(nonEmptyNotJson, fc.constantFrom('[]', '[1]')),
        fc
          .oneof(fc.integer(), fc.string(), fc.constant(null), fc.array(fc.boolean()))
          .map((v) => json({ keepScheduled: v })),
        fc
          .tuple(unknownKeyBesides(new Set(['keepScheduled'])), fc.jsonValue({ maxDepth: 1 }))
          .map(([k, v]) => withExtraKey({}, k, v)),
      )
      .map((body) => post(`${base}/drain`, body)),
    fc
      .oneof(
        fc
          .string()
          .filter((s) => !['pending', 'schedule', 'dead'].includes(s))
          .map((state) => ({ state, olderThanMs: 0 })),
        fc.constantFrom('active', 'completed').map((state) => ({ state, olderThanMs: 0 })),
        notAnIntegerIn(0, CLEAN_AGE_MAX_MS).map((olderThanMs) => ({ state: 'dead', olderThanMs })),
        notAnIntegerIn(1, CLEAN_LIMIT_MAX).map((limit) => ({ state: 'dead', olderThanMs: 0, limit })),
        fc.constant({ state: 'dead' }),
        fc.constant({}),
      )
      .map((body) => post(`${base}/clean`, json(body))),
    fc
      .string({ maxLength: 10 })
      .filter((f) => f !== 'true' && f !== 'false')
      .map((force) => ({ method: 'POST', path: `${base}/obliterate?force=${encodeURIComponent(force)}` })),
    notAnIntegerIn(1, RETRY_ALL_MAX).map((limit) => post(`${base}/dead/retry`, json({ limit }))),
    fc
      .oneof(
        fc.constant('{}'),
        notAnIntegerIn(0, PRIORITY_MAX).map((priority) => json({ priority })),
        fc.oneof(notAString, badLaneName).map((lane) => json({ lane })),
        notAnInteger.map((delayMs) => json({ delayMs })),
        notARunAt.map((runAt) => json({ runAt })),
        fc
          .tuple(unknownKeyBesides(new Set(['data', 'runAt', 'delayMs', 'priority', 'lane'])), fc.integer())
          .map(([key, value]) => withExtraKey({ priority: 1 }, key, value)),
        notJson,
      )
      .map((body): RawRequest => ({ method: 'PATCH', path: `${jobs}/${seed.pendingId}`, body })),
  );
  return fc.oneof(
    enqueue.map(of('enqueue')),
    bulk.map(of('bulk')),
    reads.map(of('job reads')),
    retryRemove.map(of('retry/remove')),
    control.map(of('job control')),
  );
}
