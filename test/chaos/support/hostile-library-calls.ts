import {
  BROWSE_MAX,
  CLEAN_AGE_MAX_MS,
  CLEAN_LIMIT_MAX,
  ENQUEUE_MANY_MAX,
  FLOW_LIMIT_RANGES,
  LANE_SETTING_RANGES,
  PRIORITY_MAX,
  RECENT_COMPLETED_MAX,
  RETRY_ALL_MAX,
  SCHEDULE_LIST_MAX,
  SCHEDULE_RANGES,
} from '@app/echomq/internal';
import fc from 'fast-check';
import { payload, validJobId } from '../../api/support/generators';
import type { Seeded } from './hostile-http-jobs';
import {
  badOptions,
  notABoolean,
  notAFunction,
  notAJobId,
  notALaneName,
  notAnIntIn,
  notAnObject,
  notAQueueName,
  notARunAt,
  notAScheduleKey,
  notAState,
  notAStringOf,
  unserialisable,
  withBadField,
  withUnknownKey,
} from './hostile-library-values';

/** One QueueService call with at least one argument its contract refuses. */
export interface LibraryCall {
  readonly method: string;
  readonly args: readonly unknown[];
}

const call =
  (method: string) =>
  (...args: fc.Arbitrary<unknown>[]): fc.Arbitrary<LibraryCall> =>
    fc.tuple(...args).map((values) => ({ method, args: values }));
const just = <T>(value: T): fc.Arbitrary<T> => fc.constant(value);

const DAY = 86_400_000;

export function libraryCalls(seed: Seeded): fc.Arbitrary<LibraryCall> {
  const queue = fc.constantFrom(seed.queue, 'untouched');
  const known = just(seed.pendingId);
  const unknownId = validJobId.filter((id) => !seed.ids.includes(id));
  const overLimit = just('x'.repeat(seed.payloadLimit + 1));

  const enqueueFields = {
    name: notAStringOf(0, 128),
    delayMs: notAnIntIn(0, Number.MAX_SAFE_INTEGER),
    runAt: notARunAt,
    maxAttempts: notAnIntIn(1, 1_000_000),
    idempotencyKey: notAStringOf(1, 256),
    backoff: fc.oneof(
      notAnObject,
      fc.constantFrom({ type: 'custom', delay: () => 1 }, { type: 'fixed', delayMs: -1 }, { type: 'linear' }),
    ),
    lane: notALaneName,
    priority: notAnIntIn(0, PRIORITY_MAX),
    timeoutMs: notAnIntIn(1, 7 * DAY),
    debounce: fc.oneof(
      notAnObject,
      fc.constantFrom({ key: '', delayMs: 10 }, { key: 'k', delayMs: 0 }, { key: 'k' }),
    ),
    throttle: fc.oneof(
      notAnObject,
      fc.constantFrom({ key: '', windowMs: 10 }, { key: 'k', windowMs: -5 }, { windowMs: 10 }),
    ),
  };
  const enqueueOptions = badOptions({}, enqueueFields);
  const badJob = fc.oneof(
    notAnObject,
    withBadField({ data: 1 }, enqueueFields),
    withUnknownKey({ data: 1 }, ['data', ...Object.keys(enqueueFields)]),
    unserialisable.map((data) => ({ data })),
  );
  const browseOptions = badOptions(
    {},
    {
      limit: notAnIntIn(1, BROWSE_MAX),
      after: notAJobId,
      lane: notALaneName,
      priority: notAnIntIn(0, PRIORITY_MAX),
    },
  );
  const rate = fc.oneof(
    notAnObject.filter((v) => v !== null),
    withBadField(
      { max: 5, windowMs: 1_000 },
      {
        max: notAnIntIn(1, FLOW_LIMIT_RANGES.rateMax.max),
        windowMs: notAnIntIn(1, FLOW_LIMIT_RANGES.rateWindowMs.max),
      },
    ),
    withUnknownKey({ max: 5, windowMs: 1_000 }, ['max', 'windowMs']),
  );
  const limits = badOptions(
    {},
    {
      rateLimit: rate,
      laneRateLimit: rate,
      globalConcurrency: notAnIntIn(1, FLOW_LIMIT_RANGES.globalConcurrency.max, true),
      laneConcurrency: notAnIntIn(1, FLOW_LIMIT_RANGES.laneConcurrency.max, true),
    },
  );
  const laneSettings = badOptions(
    { weight: 2 },
    {
      weight: notAnIntIn(1, LANE_SETTING_RANGES.weight.max, true),
      concurrency: notAnIntIn(1, LANE_SETTING_RANGES.concurrency.max, true),
    },
  );
  const templateFields = {
    name: enqueueFields.name,
    maxAttempts: enqueueFields.maxAttempts,
    backoff: enqueueFields.backoff,
    lane: enqueueFields.lane,
    priority: enqueueFields.priority,
    timeoutMs: enqueueFields.timeoutMs,
    data: fc.oneof(unserialisable, overLimit),
  };
  const spec = fc.oneof(
    notAnObject,
    withBadField(
      { cron: '0 3 * * *' },
      {
        cron: fc.oneof(notAStringOf(1, 256), fc.constantFrom('not a cron', '61 * * * *', '* * *')),
        tz: fc.oneof(notAStringOf(1, 64), fc.constantFrom('Mars/Olympus', 'UTC+99')),
      },
    ),
    withBadField(
      { everyMs: 60_000 },
      {
        everyMs: notAnIntIn(SCHEDULE_RANGES.everyMs.min, SCHEDULE_RANGES.everyMs.max),
        missed: notAStringOf(1, 4).filter((v) => v !== 'once' && v !== 'skip'),
        missedAfterMs: notAnIntIn(SCHEDULE_RANGES.missedAfterMs.min, SCHEDULE_RANGES.missedAfterMs.max),
      },
    ),
    fc.constantFrom({}, { cron: '0 3 * * *', everyMs: 1_000 }, { tz: 'UTC' }),
    withUnknownKey({ everyMs: 60_000 }, ['everyMs', 'cron', 'tz', 'missed', 'missedAfterMs']),
  );
  const patch = badOptions(
    { priority: 1 },
    {
      runAt: notARunAt,
      delayMs: notAnIntIn(0, Number.MAX_SAFE_INTEGER),
      priority: notAnIntIn(0, PRIORITY_MAX),
      lane: notALaneName,
      data: fc.oneof(unserialisable, overLimit),
    },
  );
  const queueOnly = fc.constantFrom(
    'counts',
    'metrics',
    'pause',
    'resume',
    'isPaused',
    'getLimits',
    'heldUntil',
    'laneHolds',
    'lanes',
    'drain',
    'obliterate',
    'retryAll',
    'recentCompleted',
    'listSchedules',
  );

  return fc.oneof(
    // Any method with a bad queue name, its other arguments plausible.
    fc.tuple(queueOnly, notAQueueName).map(([method, q]) => ({ method, args: [q] })),
    fc
      .tuple(fc.constantFrom('getJob', 'retry', 'remove', 'promote'), notAQueueName, known)
      .map(([method, q, id]) => ({ method, args: [q, id] })),
    call('enqueue')(notAQueueName, payload),
    call('enqueueMany')(notAQueueName, just([{ data: 1 }])),
    call('setLane')(notAQueueName, just('vip'), just({ weight: 2 })),
    call('upsertSchedule')(notAQueueName, just('k'), just({ everyMs: 60_000 })),
    call('subscribe')(
      notAQueueName,
      just(() => undefined),
    ),
    // Bad ids: malformed, or well-formed and unknown where the call needs the job.
    call('getJob')(queue, notAJobId),
    fc
      .tuple(fc.constantFrom('retry', 'remove', 'promote'), queue, fc.oneof(notAJobId, unknownId))
      .map(([method, q, id]) => ({ method, args: [q, id] })),
    call('update')(queue, fc.oneof(notAJobId, unknownId), just({ priority: 1 })),
    call('waitFor')(queue, notAJobId),
    // Bad payloads and options.
    call('enqueue')(queue, fc.oneof(unserialisable, overLimit)),
    call('enqueue')(queue, payload, enqueueOptions),
    call('submit')(queue, payload, enqueueOptions),
    call('enqueueMany')(
      queue,
      fc.oneof(
        // An empty array is a valid enqueueMany (it enqueues nothing), so it is not hostile.
        notAnObject.filter((value) => !(Array.isArray(value) && value.length === 0)),
        just(Array.from({ length: ENQUEUE_MANY_MAX + 1 }, () => ({ data: 1 }))),
      ),
    ),
    fc.tuple(queue, fc.array(payload, { maxLength: 3 }), badJob, fc.nat()).map(([q, good, bad, at]) => {
      const jobs: unknown[] = good.map((data) => ({ data }));
      jobs.splice(at % (jobs.length + 1), 0, bad);
      return { method: 'enqueueMany', args: [q, jobs] };
    }),
    call('browse')(queue, notAState),
    call('browse')(queue, just('pending'), browseOptions),
    call('listJobs')(queue, fc.constantFrom('pending', 'dead'), browseOptions),
    call('setLimits')(queue, limits),
    call('setLane')(queue, notALaneName, just({ weight: 2 })),
    call('setLane')(queue, just('vip'), laneSettings),
    fc
      .tuple(fc.constantFrom('pauseLane', 'resumeLane'), queue, notALaneName)
      .map(([method, q, lane]) => ({ method, args: [q, lane] })),
    call('recentCompleted')(queue, badOptions({}, { limit: notAnIntIn(1, RECENT_COMPLETED_MAX) })),
    call('drain')(queue, badOptions({}, { keepScheduled: notABoolean })),
    call('clean')(queue, fc.oneof(notAState, fc.constantFrom('active')), just({ olderThanMs: 0 })),
    call('clean')(
      queue,
      just('dead'),
      fc.oneof(
        badOptions(
          { olderThanMs: 0 },
          { olderThanMs: notAnIntIn(0, CLEAN_AGE_MAX_MS), limit: notAnIntIn(1, CLEAN_LIMIT_MAX) },
        ),
        just({}),
      ),
    ),
    call('obliterate')(queue, badOptions({}, { force: notABoolean })),
    call('retryAll')(queue, badOptions({}, { limit: notAnIntIn(1, RETRY_ALL_MAX) })),
    call('update')(queue, known, patch),
    call('waitFor')(queue, known, notAnIntIn(0, 2_147_483_647)),
    call('subscribe')(queue, notAFunction),
    // Schedules.
    fc
      .tuple(fc.constantFrom('getSchedule', 'removeSchedule'), queue, notAScheduleKey)
      .map(([method, q, key]) => ({ method, args: [q, key] })),
    call('upsertSchedule')(queue, notAScheduleKey, just({ everyMs: 60_000 })),
    call('upsertSchedule')(queue, just(seed.scheduleKey), spec),
    call('upsertSchedule')(
      queue,
      just(seed.scheduleKey),
      just({ everyMs: 60_000 }),
      badOptions({}, templateFields),
    ),
    call('listSchedules')(
      queue,
      badOptions({}, { limit: notAnIntIn(1, SCHEDULE_LIST_MAX), after: notAStringOf(1, 128) }),
    ),
  );
}
