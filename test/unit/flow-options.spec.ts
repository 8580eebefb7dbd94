import { readFileSync } from 'node:fs';
import { join } from 'node:path';
// Pure modules only: the unit suites do not load Nest, ioredis or the scripts.
import { InvalidArgumentError, InvalidOptionError } from '@app/echomq/errors';
import { buildJobRecord } from '@app/echomq/queue/enqueue-options';
import {
  assertFlowLimits,
  configuredLimits,
  describeLimit,
  FLOW_LIMIT_RANGES,
} from '@app/echomq/queue/flow-limits';
import {
  assertQueueOptions,
  QUEUE_DEFAULTS,
  QUEUE_OPTION_RANGES,
  resolveQueueOptions,
} from '@app/echomq/queue/queue-options';
import { validateModuleOptions } from '@app/echomq/module/validate-options';

const ID = 'JOB0Ah3kPz9QwE';
const DAY = 86_400_000;
const connection = { url: 'redis://127.0.0.1:1' };

function build(job: Record<string, unknown>) {
  return buildJobRecord(ID, { data: 1, ...job }, 1024);
}

function refusal(run: () => unknown): InvalidOptionError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidOptionError) return error;
    throw error;
  }
  throw new Error('the options were accepted');
}

describe('flow control options', () => {
  describe('at enqueue: lane, priority, timeoutMs', () => {
    it('leaves out every default, so a plain job is written as before lanes existed', () => {
      for (const job of [{}, { lane: 'default' }, { priority: 0 }, { lane: 'default', priority: 0 }]) {
        const record = build(job);
        expect('lane' in record || 'priority' in record || 'timeoutMs' in record).toBe(false);
      }
    });

    it('carries the values given', () => {
      expect(build({ lane: 'tenant-42', priority: 9, timeoutMs: 1 })).toMatchObject({
        lane: 'tenant-42',
        priority: 9,
        timeoutMs: 1,
      });
      expect(build({ lane: 'a@b.c:x+y=z_1.2', timeoutMs: 7 * DAY })).toMatchObject({
        lane: 'a@b.c:x+y=z_1.2',
        timeoutMs: 7 * DAY,
      });
      expect(build({ priority: 3 })).toMatchObject({ priority: 3 });
      expect('lane' in build({ priority: 3 })).toBe(false);
    });

    // [what is wrong, the options, a word the message must hold]
    const refused: [string, Record<string, unknown>, string][] = [
      ['an empty lane', { lane: '' }, 'lane'],
      ['a lane of 65 characters', { lane: 'x'.repeat(65) }, 'lane'],
      ['a lane with a space', { lane: 'a b' }, 'lane'],
      ['a lane with a brace', { lane: 'a{b}' }, 'lane'],
      ['a lane that is not a string', { lane: 7 }, 'lane'],
      ['a null lane', { lane: null }, 'lane'],
      ['priority -1', { priority: -1 }, 'priority'],
      ['priority 10', { priority: 10 }, 'priority'],
      ['a fractional priority', { priority: 1.5 }, 'priority'],
      ['a priority given as a string', { priority: '1' }, 'priority'],
      ['a NaN priority', { priority: Number.NaN }, 'priority'],
      ['timeoutMs 0', { timeoutMs: 0 }, 'timeoutMs'],
      ['a negative timeoutMs', { timeoutMs: -5 }, 'timeoutMs'],
      ['timeoutMs past 7 days', { timeoutMs: 7 * DAY + 1 }, 'timeoutMs'],
      ['a fractional timeoutMs', { timeoutMs: 1.5 }, 'timeoutMs'],
      ['a timeoutMs given as a string', { timeoutMs: '100' }, 'timeoutMs'],
      ['a null timeoutMs', { timeoutMs: null }, 'timeoutMs'],
    ];

    it.each(refused)('refuses %s with InvalidArgumentError', (_what, job, word) => {
      let caught: unknown;
      try {
        build(job);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(InvalidArgumentError);
      expect((caught as InvalidArgumentError).code).toBe('INVALID_ARGUMENT');
      expect((caught as Error).message.toLowerCase()).toContain(word.toLowerCase());
    });
    it.each([
      [{ lane: 'a b' }, 'lane must be 1 to 64 characters from A-Z a-z 0-9 _ . : @ + = -, got "a b"'],
      [{ lane: 7 }, 'lane must be 1 to 64 characters from A-Z a-z 0-9 _ . : @ + = -, got 7'],
      [{ priority: 2.5 }, 'priority must be an integer from 0 to 9, got 2.5'],
      [{ priority: '1' }, 'priority must be an integer from 0 to 9, got "1"'],
      [{ timeoutMs: 0 }, 'timeoutMs must be an integer from 1 to 604800000, got 0'],
      [{ timeoutMs: null }, 'timeoutMs must be an integer from 1 to 604800000, got null'],
    ])('says what was given: %j', (job, message) => {
      expect(() => build(job)).toThrow(message);
    });

    it('names the item when it is one of several (jobs[3].lane)', () => {
      expect(() => buildJobRecord(ID, { data: 1, lane: 'a b' }, 1024, 'jobs[3]')).toThrow(
        /^jobs\[3\]\.lane must be .*, got "a b"$/,
      );
      expect(() => buildJobRecord(ID, { data: 1, priority: 10 }, 1024, 'jobs[0]')).toThrow(
        'jobs[0].priority must be an integer from 0 to 9, got 10',
      );
      expect(() => buildJobRecord(ID, { data: 1, maxAttempts: 0 }, 1024, 'jobs[2]')).toThrow(
        'jobs[2].maxAttempts must be an integer from 1 to 1000000, got 0',
      );
      expect(() =>
        buildJobRecord(ID, { data: 1, backoff: { type: 'fixed', delayMs: -1 } }, 1024, 'jobs[1]'),
      ).toThrow(/^jobs\[1\]\.backoff\.delayMs must be an integer/);
    });
  });

  describe('as queue options at boot', () => {
    const inQueue = (options: Record<string, unknown>) => ({ connection, queues: { emails: options } });

    // [what is wrong, the options, the option the error must name]
    const refused: [string, Record<string, unknown>, string][] = [
      ['timeoutMs 0', inQueue({ timeoutMs: 0 }), 'queues.emails.timeoutMs'],
      ['timeoutMs past 7 days', inQueue({ timeoutMs: 7 * DAY + 1 }), 'queues.emails.timeoutMs'],
      ['a timeoutMs given as a string', inQueue({ timeoutMs: '5s' }), 'queues.emails.timeoutMs'],
      ['a rateLimit that is a number', inQueue({ rateLimit: 10 }), 'queues.emails.rateLimit'],
      ['a rateLimit without max', inQueue({ rateLimit: { windowMs: 1_000 } }), 'queues.emails.rateLimit.max'],
      ['rateLimit.max 0', inQueue({ rateLimit: { max: 0, windowMs: 1_000 } }), 'queues.emails.rateLimit.max'],
      [
        'rateLimit.max past a million',
        inQueue({ rateLimit: { max: 1_000_001, windowMs: 1_000 } }),
        'queues.emails.rateLimit.max',
      ],
      [
        'a fractional rateLimit.max',
        inQueue({ rateLimit: { max: 1.5, windowMs: 1_000 } }),
        'queues.emails.rateLimit.max',
      ],
      [
        'a rateLimit without windowMs',
        inQueue({ rateLimit: { max: 5 } }),
        'queues.emails.rateLimit.windowMs',
      ],
      [
        'rateLimit.windowMs 0',
        inQueue({ rateLimit: { max: 5, windowMs: 0 } }),
        'queues.emails.rateLimit.windowMs',
      ],
      [
        'rateLimit.windowMs past a day',
        inQueue({ rateLimit: { max: 5, windowMs: DAY + 1 } }),
        'queues.emails.rateLimit.windowMs',
      ],
      [
        'a misspelt rateLimit field',
        inQueue({ rateLimit: { max: 5, windowMs: 1_000, burst: 2 } }),
        'queues.emails.rateLimit.burst',
      ],
      ['globalConcurrency 0', inQueue({ globalConcurrency: 0 }), 'queues.emails.globalConcurrency'],
      [
        'globalConcurrency past a million',
        inQueue({ globalConcurrency: 1_000_001 }),
        'queues.emails.globalConcurrency',
      ],
      [
        'a fractional globalConcurrency',
        inQueue({ globalConcurrency: 2.5 }),
        'queues.emails.globalConcurrency',
      ],
      ['laneConcurrency 0', inQueue({ laneConcurrency: 0 }), 'queues.emails.laneConcurrency'],
      [
        'laneConcurrency past a million',
        inQueue({ laneConcurrency: 1_000_001 }),
        'queues.emails.laneConcurrency',
      ],
      [
        'a laneConcurrency given as a string',
        inQueue({ laneConcurrency: '3' }),
        'queues.emails.laneConcurrency',
      ],
      [
        'a laneRateLimit that is an array',
        inQueue({ laneRateLimit: [5, 1_000] }),
        'queues.emails.laneRateLimit',
      ],
      [
        'laneRateLimit.max 0',
        inQueue({ laneRateLimit: { max: 0, windowMs: 1_000 } }),
        'queues.emails.laneRateLimit.max',
      ],
      [
        'laneRateLimit.windowMs past a day',
        inQueue({ laneRateLimit: { max: 1, windowMs: DAY + 1 } }),
        'queues.emails.laneRateLimit.windowMs',
      ],
      [
        'a bad limit in defaults',
        { connection, defaults: { globalConcurrency: -1 } },
        'defaults.globalConcurrency',
      ],
    ];

    it.each(refused)('refuses %s, naming the option', (_what, options, option) => {
      const error = refusal(() => validateModuleOptions(options));
      expect(error.option).toBe(option);
      expect(error.code).toBe('INVALID_OPTION');
      expect(error.message).toContain(`Option ${option}:`);
    });

    it('accepts every bound, and null for each limit and timeoutMs', () => {
      const edges: Record<string, unknown>[] = [
        { timeoutMs: 1, rateLimit: { max: 1, windowMs: 1 }, globalConcurrency: 1, laneConcurrency: 1 },
        {
          timeoutMs: 7 * DAY,
          rateLimit: { max: 1_000_000, windowMs: DAY },
          globalConcurrency: 1_000_000,
          laneConcurrency: 1_000_000,
          laneRateLimit: { max: 1_000_000, windowMs: DAY },
        },
        {
          timeoutMs: null,
          rateLimit: null,
          globalConcurrency: null,
          laneConcurrency: null,
          laneRateLimit: null,
        },
        { timeoutMs: undefined, rateLimit: undefined },
      ];
      for (const options of edges) expect(() => validateModuleOptions(inQueue(options))).not.toThrow();
    });

    it('resolves timeoutMs to null by default, and leaves the shared limits out unless given', () => {
      expect(QUEUE_DEFAULTS.timeoutMs).toBeNull();
      const resolved = resolveQueueOptions({ concurrency: 2 });
      expect(resolved.timeoutMs).toBeNull();
      for (const key of ['rateLimit', 'globalConcurrency', 'laneConcurrency', 'laneRateLimit']) {
        expect(key in resolved).toBe(false);
      }
      expect(resolveQueueOptions({ timeoutMs: 5_000 }, { timeoutMs: null }).timeoutMs).toBeNull();
      expect(resolveQueueOptions({ timeoutMs: null }, { timeoutMs: 5_000 }).timeoutMs).toBe(5_000);
    });

    it("passes a worker's merged options, timeoutMs null included", () => {
      expect(() => assertQueueOptions(resolveQueueOptions(), '')).not.toThrow();
      expect(() =>
        assertQueueOptions(resolveQueueOptions({ rateLimit: { max: 0, windowMs: 1 } }), ''),
      ).toThrow(InvalidOptionError);
    });
  });

  describe('configuredLimits', () => {
    it('takes each limit from the latest layer that gives it, and keeps null (clear)', () => {
      expect(
        configuredLimits(
          { globalConcurrency: 7, rateLimit: { max: 1, windowMs: 10 }, concurrency: 3 } as never,
          undefined,
          { rateLimit: { max: 5, windowMs: 1_000 }, laneConcurrency: null },
          { globalConcurrency: undefined },
        ),
      ).toEqual({
        globalConcurrency: 7,
        rateLimit: { max: 5, windowMs: 1_000 },
        laneConcurrency: null,
      });
    });

    it('is empty when nothing is configured, so nothing is written', () => {
      expect(configuredLimits()).toEqual({});
      expect(configuredLimits({}, undefined, { concurrency: 4 } as never)).toEqual({});
    });
  });

  describe('the limits of an admin call (setLimits)', () => {
    it('keeps exactly the limits given, null included', () => {
      expect(assertFlowLimits({ rateLimit: null, laneRateLimit: { max: 2, windowMs: 50 } })).toEqual({
        rateLimit: null,
        laneRateLimit: { max: 2, windowMs: 50 },
      });
      expect(assertFlowLimits({ globalConcurrency: undefined })).toEqual({});
    });

    it.each([
      [null, 'limits'],
      ['fast', 'limits'],
      [{ rateLimit: { max: 0, windowMs: 1 } }, 'rateLimit.max'],
      [{ rateLimit: { max: 1, windowMs: DAY + 1 } }, 'rateLimit.windowMs'],
      [{ globalConcurrency: 0 }, 'globalConcurrency'],
      [{ laneConcurrency: 1_000_001 }, 'laneConcurrency'],
      [{ laneRateLimit: 'slow' }, 'laneRateLimit'],
      [{ concurrency: 5 }, 'concurrency'],
    ])('refuses %j with InvalidArgumentError naming %s', (limits, option) => {
      expect(() => assertFlowLimits(limits)).toThrow(InvalidArgumentError);
      expect(() => assertFlowLimits(limits)).toThrow(new RegExp(`^${option.replace('.', '\\.')} `));
    });

    it('names an unknown key as not a limit, and says what was given', () => {
      expect(() => assertFlowLimits({ concurrency: 5 })).toThrow(
        'concurrency is not a limit; known: rateLimit, globalConcurrency, laneConcurrency, laneRateLimit',
      );
      expect(() => assertFlowLimits({ laneRateLimit: { max: 1, windowMs: 1, burst: 1 } })).toThrow(
        'laneRateLimit.burst is not a field of a rate limit; known: max, windowMs',
      );
      expect(() => assertFlowLimits({ laneConcurrency: '2' })).toThrow(
        'laneConcurrency must be an integer from 1 to 1,000,000, got "2"',
      );
    });
  });

  it('describes limits in log lines', () => {
    expect(describeLimit({ max: 100, windowMs: 1_000 })).toBe('100 per 1000 ms');
    expect(describeLimit(5)).toBe('5');
    expect(describeLimit(null)).toBe('none');
  });

  it('are documented in docs/options.md with the ranges the code enforces', () => {
    const doc = readFileSync(join(__dirname, '../../docs/options.md'), 'utf8');
    const ranges: [string, { min: number; max: number }][] = [
      ['timeoutMs', QUEUE_OPTION_RANGES.timeoutMs],
      ['rateLimit.max', FLOW_LIMIT_RANGES.rateMax],
      ['rateLimit.windowMs', FLOW_LIMIT_RANGES.rateWindowMs],
      ['globalConcurrency', FLOW_LIMIT_RANGES.globalConcurrency],
      ['laneConcurrency', FLOW_LIMIT_RANGES.laneConcurrency],
    ];
    for (const [option, { min, max }] of ranges) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${option}\``));
      expect(row).toContain(`${min.toLocaleString('en-US')} .. ${max.toLocaleString('en-US')}`);
    }
    for (const option of ['rateLimit', 'laneRateLimit', 'lane', 'priority']) {
      expect(doc).toContain(`| \`${option}\``);
    }
    expect(doc).toContain('## Limits live in Redis');
  });
});
