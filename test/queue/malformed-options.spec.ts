import type { INestApplication } from '@nestjs/common';
import { EchoMqError, QueueService } from '@app/echomq';
import { checkEnqueueItem, checkEnqueueOptions } from '@app/echomq/queue/enqueue-options';
import { Redis } from 'ioredis';
import { keyDump } from '../api/support/api';
import { bootApp } from '../support/nest';
import { RedisServer } from '../support/redis-server';

/**
 * Every options bag of the library refuses what is not one, as drain and clean always did:
 * null, a number, a string, an array, a function or an unknown key throws InvalidArgumentError
 * naming the call, and a field set to null is refused by its own rule instead of being read as
 * "the default". Nothing a refused call does reaches Redis: the suite has a redis-server of its
 * own, so its DBSIZE and a dump of every key are exact.
 */

const QUEUE = 'malformed';
const NOT_OBJECTS: readonly [string, unknown][] = [
  ['null', null],
  ['a number', 5],
  ['a string', 'x'],
  ['an array', []],
  ['a function', () => ({ limit: 1 })],
];

type Summary = 'accepted' | { readonly code: unknown; readonly message: string };

async function outcomeOf(call: () => Promise<unknown>): Promise<Summary> {
  try {
    await call();
    return 'accepted';
  } catch (error) {
    return summaryOf(error);
  }
}

function summaryOf(error: unknown): Summary {
  // A typed error's stable code; anything else (a TypeError) shows as its class name.
  const code = error instanceof EchoMqError ? error.code : (error as Error).constructor.name;
  return { code, message: error instanceof Error ? error.message : String(error) };
}

type RefusedCall = readonly [label: string, call: () => Promise<unknown>, message: RegExp, code?: string];

/** Each call must be refused with its code (INVALID_ARGUMENT unless given) and a message matching its pattern. */
async function expectRefused(calls: readonly RefusedCall[]): Promise<void> {
  for (const [label, call, message, code = 'INVALID_ARGUMENT'] of calls) {
    // The label rides along, so a failure names the call rather than just the outcome.
    expect({ label, outcome: await outcomeOf(call) }).toEqual({
      label,
      outcome: { code, message: expect.stringMatching(message) },
    });
  }
}

describe('malformed options', () => {
  let server: RedisServer;
  let redis: Redis;
  let app: INestApplication;
  let queues: QueueService;
  let before: { size: number; keys: Map<string, string> };

  beforeAll(async () => {
    server = await RedisServer.start();
    redis = new Redis(server.url);
    // A configured node number: no node lease key comes and goes while the keys are compared.
    app = await bootApp([], { connection: { url: server.url }, nodeId: 3 });
    queues = app.get(QueueService);
    // Something for the reads to find, and for a refused call to disturb.
    await queues.enqueue(QUEUE, { n: 1 });
    await queues.enqueue(QUEUE, { n: 2 }, { delayMs: 600_000, lane: 'vip', priority: 3 });
    await queues.upsertSchedule(QUEUE, 'nightly', { cron: '0 3 * * *' }, { data: { report: 1 } });
  });
  beforeEach(async () => {
    before = { size: await redis.dbsize(), keys: await keyDump(redis) };
  });
  afterEach(async () => {
    // Every refusal of the test wrote nothing.
    expect({ size: await redis.dbsize(), keys: await keyDump(redis) }).toEqual(before);
  });
  afterAll(async () => {
    await app.close();
    await redis.quit();
    await server.destroy();
  });

  it('browse and listJobs refuse options that are not an object of their fields', async () => {
    const bad = (options: unknown) => options as never;
    await expectRefused([
      ...NOT_OBJECTS.flatMap(([what, options]): RefusedCall[] => [
        [
          `browse ${what}`,
          () => queues.browse(QUEUE, 'pending', bad(options)),
          /^browse options must be an object/,
        ],
        [
          `listJobs ${what}`,
          () => queues.listJobs(QUEUE, 'dead', bad(options)),
          /^browse options must be an object/,
        ],
      ]),
      ['browse {zz}', () => queues.browse(QUEUE, 'pending', bad({ zz: 1 })), /unknown: zz$/],
      [
        'browse {limit: null}',
        () => queues.browse(QUEUE, 'active', bad({ limit: null })),
        /^limit .*got null/,
      ],
      [
        'listJobs {limit: null}',
        () => queues.listJobs(QUEUE, 'pending', bad({ limit: null })),
        /^limit .*got null/,
      ],
      // A job id's own rule, as for any other value that is not one.
      [
        'browse {after: null}',
        () => queues.browse(QUEUE, 'dead', bad({ after: null })),
        /null/,
        'INVALID_JOB_ID',
      ],
      ['browse {lane: null}', () => queues.browse(QUEUE, 'pending', bad({ lane: null })), /^lane .*got null/],
    ]);
    // Left out means the default, as before.
    expect(await queues.browse(QUEUE, 'pending')).toHaveLength(1);
    expect(await queues.browse(QUEUE, 'pending', { limit: undefined })).toHaveLength(1);
  });

  it('recentCompleted and listSchedules refuse options that are not an object of their fields', async () => {
    const bad = (options: unknown) => options as never;
    await expectRefused([
      ...NOT_OBJECTS.flatMap(([what, options]): RefusedCall[] => [
        [
          `recentCompleted ${what}`,
          () => queues.recentCompleted(QUEUE, bad(options)),
          /^recentCompleted options must be an object/,
        ],
        [
          `listSchedules ${what}`,
          () => queues.listSchedules(QUEUE, bad(options)),
          /^listSchedules options must be an object/,
        ],
      ]),
      ['recentCompleted {zz}', () => queues.recentCompleted(QUEUE, bad({ limit: 5, zz: 1 })), /unknown: zz$/],
      [
        'recentCompleted {limit: null}',
        () => queues.recentCompleted(QUEUE, bad({ limit: null })),
        /^limit .*got null/,
      ],
      ['listSchedules {zz}', () => queues.listSchedules(QUEUE, bad({ zz: 1 })), /unknown: zz$/],
      [
        'listSchedules {limit: null}',
        () => queues.listSchedules(QUEUE, bad({ limit: null })),
        /^limit .*got null/,
      ],
      ['listSchedules {after: null}', () => queues.listSchedules(QUEUE, bad({ after: null })), /got null/],
    ]);
    expect((await queues.listSchedules(QUEUE)).map((view) => view.key)).toEqual(['nightly']);
    expect(await queues.recentCompleted(QUEUE, {})).toEqual([]);
  });

  it('enqueue, submit and enqueueMany refuse unknown or null options, and jobs that are not objects', async () => {
    const bad = (value: unknown) => value as never;
    await expectRefused([
      ['enqueue {zz}', () => queues.enqueue(QUEUE, 1, bad({ zz: 1 })), /unknown: zz$/],
      ['enqueue {delayMS}', () => queues.enqueue(QUEUE, 1, bad({ delayMS: 5_000 })), /unknown: delayMS$/],
      ['enqueue a string', () => queues.enqueue(QUEUE, 1, bad('x')), /(unknown: 0|got "x")$/],
      [
        'enqueue {delayMs: null}',
        () => queues.enqueue(QUEUE, 1, bad({ delayMs: null })),
        /^delayMs .*got null/,
      ],
      ['enqueue {name: null}', () => queues.enqueue(QUEUE, 1, bad({ name: null })), /^name .*got null/],
      ['submit {zz}', () => queues.submit(QUEUE, 1, bad({ zz: 1 })), /unknown: zz$/],
      [
        'submit a throttle with {zz}',
        () => queues.submit(QUEUE, 1, bad({ throttle: { key: 'k', windowMs: 1_000 }, zz: 1 })),
        /unknown: zz$/,
      ],
      ['enqueueMany [null]', () => queues.enqueueMany(QUEUE, [bad(null)]), /must be an object, got null$/],
      ['enqueueMany [5]', () => queues.enqueueMany(QUEUE, [bad(5)]), /must be an object, got 5$/],
      ['enqueueMany [undefined]', () => queues.enqueueMany(QUEUE, [bad(undefined)]), /got undefined$/],
      ['enqueueMany [[a]]', () => queues.enqueueMany(QUEUE, [bad(['a'])]), /must be an object/],
      [
        'enqueueMany [{data, zz}]',
        () => queues.enqueueMany(QUEUE, [bad({ data: 1, zz: 1 })]),
        /unknown: zz$/,
      ],
      [
        'enqueueMany names the job',
        () => queues.enqueueMany(QUEUE, [{ data: 1 }, bad({ data: 2, delayMS: 5 })]),
        /^jobs\[1\] takes data, .*unknown: delayMS$/,
      ],
      [
        'enqueueMany [{data, delayMs: null}]',
        () => queues.enqueueMany(QUEUE, [{ data: 1 }, bad({ data: 2, delayMs: null })]),
        /^jobs\[1\]\.delayMs .*got null/,
      ],
    ]);
  });

  it('checks the options bag of enqueue and submit, and each item of enqueueMany, on their own', () => {
    const refusal = (check: () => unknown): Summary => {
      try {
        check();
        return 'accepted';
      } catch (error) {
        return summaryOf(error);
      }
    };
    // The spread `{ ...options, data }` turns null, a number, an array or a function into a
    // plain job, so enqueue and submit check their bag before they spread it.
    for (const [what, options] of [...NOT_OBJECTS, ['{zz}', { zz: 1 }] as const]) {
      expect({ what, outcome: refusal(() => checkEnqueueOptions(options)) }).toEqual({
        what,
        outcome: {
          code: 'INVALID_ARGUMENT',
          message: expect.stringMatching(/^enqueue options (must|takes)/),
        },
      });
    }
    expect(refusal(() => checkEnqueueOptions({ data: 1 }))).toMatchObject({ message: /unknown: data$/ });
    expect(checkEnqueueOptions(undefined)).toEqual({});
    expect(checkEnqueueOptions({ delayMs: 5, lane: 'vip' })).toEqual({ delayMs: 5, lane: 'vip' });
    for (const [what, job] of [...NOT_OBJECTS, ['undefined', undefined] as const]) {
      expect({ what, outcome: refusal(() => checkEnqueueItem(job, 'jobs[4]')) }).toEqual({
        what,
        outcome: { code: 'INVALID_ARGUMENT', message: expect.stringMatching(/^jobs\[4\] must be an object/) },
      });
    }
    expect(checkEnqueueItem({ data: null, name: 'n' }, 'jobs[0]')).toEqual({ data: null, name: 'n' });
  });

  it('upsertSchedule reads only undefined as "the default", never null', async () => {
    const bad = (value: unknown) => value as never;
    await expectRefused([
      [
        'template null',
        () => queues.upsertSchedule(QUEUE, 'k', { everyMs: 60_000 }, bad(null)),
        /template must be an object, got null/,
      ],
      [
        'template []',
        () => queues.upsertSchedule(QUEUE, 'k', { everyMs: 60_000 }, bad([])),
        /template must be an object/,
      ],
      [
        'tz null',
        () => queues.upsertSchedule(QUEUE, 'k', bad({ cron: '0 3 * * *', tz: null })),
        /^tz .*got null/,
      ],
      [
        'missed null',
        () => queues.upsertSchedule(QUEUE, 'k', bad({ everyMs: 60_000, missed: null })),
        /^missed .*got null/,
      ],
      [
        'missedAfterMs null',
        () => queues.upsertSchedule(QUEUE, 'k', bad({ everyMs: 60_000, missedAfterMs: null })),
        /^missedAfterMs .*got null/,
      ],
      [
        'template name null',
        () => queues.upsertSchedule(QUEUE, 'k', { everyMs: 60_000 }, bad({ data: 1, name: null })),
        /^name .*got null/,
      ],
    ]);
    expect((await queues.listSchedules(QUEUE)).map((view) => view.key)).toEqual(['nightly']);
  });

  it('subscribe refuses a listener that is not a function', async () => {
    const bad = (value: unknown) => value as never;
    await expectRefused([
      ['listener 5', () => queues.subscribe(QUEUE, bad(5)), /^listener must be a function, got 5$/],
      ['listener null', () => queues.subscribe(QUEUE, bad(null)), /^listener must be a function, got null$/],
      [
        'listener {}',
        () => queues.subscribe(QUEUE, bad({ next: () => undefined })),
        /^listener must be a function/,
      ],
    ]);
  });

  it('enqueue and submit refuse an options bag that is not an object', async () => {
    const bad = (value: unknown) => value as never;
    await expectRefused(
      NOT_OBJECTS.flatMap(([what, options]): RefusedCall[] => [
        [
          `enqueue ${what}`,
          () => queues.enqueue(QUEUE, 1, bad(options)),
          /^enqueue options must be an object/,
        ],
        [`submit ${what}`, () => queues.submit(QUEUE, 1, bad(options)), /^enqueue options must be an object/],
      ]),
    );
    await expectRefused([
      [
        'enqueue {zz}',
        () => queues.enqueue(QUEUE, 1, bad({ zz: 1 })),
        /^enqueue options takes .*unknown: zz$/,
      ],
      [
        'enqueueMany [null]',
        () => queues.enqueueMany(QUEUE, [bad(null)]),
        /^jobs\[0\] must be an object, got null$/,
      ],
      ['enqueueMany [5]', () => queues.enqueueMany(QUEUE, [bad(5)]), /^jobs\[0\] must be an object, got 5$/],
      [
        'enqueueMany [{data, zz}]',
        () => queues.enqueueMany(QUEUE, [bad({ data: 1, zz: 1 })]),
        /^jobs\[0\] takes .*unknown: zz$/,
      ],
    ]);
  });

  it('refuses an options bag that is an object but not a plain one (a Map, a Date, an inherited field)', async () => {
    const bad = (value: unknown) => value as never;
    await expectRefused([
      [
        'enqueue a Map',
        () => queues.enqueue(QUEUE, 1, bad(new Map([['delayMs', 5]]))),
        /^enqueue options must be a plain object, got a Map$/,
      ],
      [
        'enqueue a Date',
        () => queues.enqueue(QUEUE, 1, bad(new Date())),
        /^enqueue options must be a plain object, got a Date$/,
      ],
      [
        'enqueue an inherited delayMs',
        () => queues.enqueue(QUEUE, 1, bad(Object.create({ delayMs: 600_000 }))),
        /^enqueue options must be a plain object/,
      ],
      [
        'enqueueMany an item with an inherited delayMs',
        () => queues.enqueueMany(QUEUE, [bad(Object.create({ data: 7, delayMs: 600_000 }))]),
        /^jobs\[0\] must be a plain object/,
      ],
    ]);
  });
});
