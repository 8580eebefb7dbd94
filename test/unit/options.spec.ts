import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  InvalidOptionError,
  MODULE_DEFAULTS,
  MODULE_OPTION_RANGES,
  ProcessorDefinitionError,
  QUEUE_DEFAULTS,
  QUEUE_OPTION_RANGES,
  resolveModuleSettings,
  type EchoMqModuleOptions,
} from '@app/echomq/internal';
import { PAYLOAD_MAX_BYTES, SCRIPT_BATCH_MAX } from '@app/echomq/scripts/limits';
import { assertWorkerOptions } from '@app/echomq/worker/processor-definition';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const connection = { url: 'redis://127.0.0.1:1' };

/** The options as a user (or a config file, or an unset env var) might write them: anything. */
function resolve(options: Record<string, unknown>) {
  return resolveModuleSettings(options as unknown as EchoMqModuleOptions);
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

/** Queue options checked through each layer they can be given in at boot. */
function inQueue(queueOptions: Record<string, unknown>): Record<string, unknown> {
  return { connection, queues: { emails: queueOptions } };
}

// [what is wrong, the options, the option the error must name]
const refused: [string, Record<string, unknown>, string][] = [
  ['no connection', {}, 'connection'],
  ['a null connection', { connection: null }, 'connection'],
  ['a connection given as a string', { connection: 'redis://localhost' }, 'connection'],
  ['a url from an unset variable', { connection: { url: undefined } }, 'connection.url'],
  ['an empty url', { connection: { url: '' } }, 'connection.url'],
  ['a url that is not a string', { connection: { url: 6379 } }, 'connection.url'],
  ['a connection naming no server', { connection: {} }, 'connection'],
  ['ioredis options naming no server', { connection: { db: 2 } }, 'connection'],
  ['an empty host', { connection: { host: '' } }, 'connection.host'],
  ['port 0', { connection: { port: 0 } }, 'connection.port'],
  ['a port that is not a number', { connection: { host: 'redis', port: Number('x') } }, 'connection.port'],
  ['an empty socket path', { connection: { path: '' } }, 'connection.path'],
  ['a cluster without seed nodes', { connection: { cluster: { nodes: [] } } }, 'connection.cluster.nodes'],
  ['a cluster that is not an object', { connection: { cluster: true } }, 'connection.cluster'],
  [
    'a cluster with a url beside it',
    { connection: { cluster: { nodes: [{ host: 'a', port: 1 }] }, url: 'redis://b' } },
    'connection.url',
  ],
  ['a negative nodeId', { connection, nodeId: -1 }, 'nodeId'],
  ['nodeId 1024', { connection, nodeId: 1024 }, 'nodeId'],
  ['a fractional nodeId', { connection, nodeId: 1.5 }, 'nodeId'],
  ['a nodeId given as a string', { connection, nodeId: '3' }, 'nodeId'],
  ['eventsMaxLen 99', { connection, eventsMaxLen: 99 }, 'eventsMaxLen'],
  ['eventsMaxLen above a million', { connection, eventsMaxLen: 1_000_001 }, 'eventsMaxLen'],
  ['a fractional eventsMaxLen', { connection, eventsMaxLen: 1_000.5 }, 'eventsMaxLen'],
  ['maxPayloadBytes 0', { connection, maxPayloadBytes: 0 }, 'maxPayloadBytes'],
  [
    'maxPayloadBytes past the call limit',
    { connection, maxPayloadBytes: PAYLOAD_MAX_BYTES + 1 },
    'maxPayloadBytes',
  ],
  ['idempotencyTtlMs 0', { connection, idempotencyTtlMs: 0 }, 'idempotencyTtlMs'],
  ['idempotencyTtlMs under a second', { connection, idempotencyTtlMs: 999 }, 'idempotencyTtlMs'],
  ['idempotencyTtlMs past 30 days', { connection, idempotencyTtlMs: 30 * DAY + 1 }, 'idempotencyTtlMs'],
  ['a negative shutdownGraceMs', { connection, shutdownGraceMs: -1 }, 'shutdownGraceMs'],
  ['shutdownGraceMs past 10 minutes', { connection, shutdownGraceMs: 600_001 }, 'shutdownGraceMs'],
  ['commandTimeoutMs 99', { connection, commandTimeoutMs: 99 }, 'commandTimeoutMs'],
  ['commandTimeoutMs past 2 minutes', { connection, commandTimeoutMs: 120_001 }, 'commandTimeoutMs'],
  ['replayWindowMs under 5 s', { connection, replayWindowMs: 4_999 }, 'replayWindowMs'],
  ['replayWindowMs past an hour', { connection, replayWindowMs: HOUR + 1 }, 'replayWindowMs'],
  [
    'a replay window shorter than two command deadlines',
    { connection, commandTimeoutMs: 10_000, replayWindowMs: 19_999 },
    'replayWindowMs',
  ],
  [
    'a command deadline the default replay window cannot cover',
    { connection, commandTimeoutMs: 40_000 },
    'replayWindowMs',
  ],
  ['reaper.intervalMs 49', { connection, reaper: { intervalMs: 49 } }, 'reaper.intervalMs'],
  ['reaper.intervalMs past a minute', { connection, reaper: { intervalMs: 60_001 } }, 'reaper.intervalMs'],
  ['reaper.batch 0 (nothing would ever be reaped)', { connection, reaper: { batch: 0 } }, 'reaper.batch'],
  [
    'reaper.batch past the script bound',
    { connection, reaper: { batch: SCRIPT_BATCH_MAX + 1 } },
    'reaper.batch',
  ],
  ['a fractional reaper.batch', { connection, reaper: { batch: 2.5 } }, 'reaper.batch'],
  ['reaper given as a number', { connection, reaper: 500 }, 'reaper'],
  ['a misspelt reaper option', { connection, reaper: { batchSize: 10 } }, 'reaper.batchSize'],
  ['a misspelt module option', { connection, eventsMaxlen: 500 }, 'eventsMaxlen'],
  ['isGlobal inside the options (it is an extra of forRoot)', { connection, isGlobal: true }, 'isGlobal'],
  ['defaults given as a string', { connection, defaults: 'fast' }, 'defaults'],
  ['concurrency 0 in defaults', { connection, defaults: { concurrency: 0 } }, 'defaults.concurrency'],
  ['queues given as an array', { connection, queues: [] }, 'queues'],
  ['a bad queue name in queues', { connection, queues: { 'bad name': {} } }, 'queues.bad name'],
  ['concurrency 0', inQueue({ concurrency: 0 }), 'queues.emails.concurrency'],
  ['concurrency past 10,000', inQueue({ concurrency: 10_001 }), 'queues.emails.concurrency'],
  ['leaseMs under a second', inQueue({ leaseMs: 999 }), 'queues.emails.leaseMs'],
  ['leaseMs past a day', inQueue({ leaseMs: DAY + 1 }), 'queues.emails.leaseMs'],
  ['maxAttempts 0', inQueue({ maxAttempts: 0 }), 'queues.emails.maxAttempts'],
  ['maxAttempts past a million', inQueue({ maxAttempts: 1_000_001 }), 'queues.emails.maxAttempts'],
  ['a fractional maxAttempts', inQueue({ maxAttempts: 2.5 }), 'queues.emails.maxAttempts'],
  ['a negative retainCompletedMs', inQueue({ retainCompletedMs: -1 }), 'queues.emails.retainCompletedMs'],
  [
    'retainCompletedMs past a year',
    inQueue({ retainCompletedMs: 365 * DAY + 1 }),
    'queues.emails.retainCompletedMs',
  ],
  ['a misspelt queue option', inQueue({ concurency: 5 }), 'queues.emails.concurency'],
  ['a backoff that is not an object', inQueue({ backoff: 'exponential' }), 'queues.emails.backoff'],
  [
    'an unknown backoff type',
    inQueue({ backoff: { type: 'linear', delayMs: 1 } }),
    'queues.emails.backoff.type',
  ],
  [
    'a fixed backoff without delayMs',
    inQueue({ backoff: { type: 'fixed' } }),
    'queues.emails.backoff.delayMs',
  ],
  [
    'a negative fixed delay',
    inQueue({ backoff: { type: 'fixed', delayMs: -1 } }),
    'queues.emails.backoff.delayMs',
  ],
  [
    'a fixed delay past 7 days',
    inQueue({ backoff: { type: 'fixed', delayMs: 7 * DAY + 1 } }),
    'queues.emails.backoff.delayMs',
  ],
  [
    'a NaN exponential delay',
    inQueue({ backoff: { type: 'exponential', delayMs: Number.NaN } }),
    'queues.emails.backoff.delayMs',
  ],
  [
    'maxDelayMs below delayMs',
    inQueue({ backoff: { type: 'exponential', delayMs: 5_000, maxDelayMs: 4_999 } }),
    'queues.emails.backoff.maxDelayMs',
  ],
  [
    'maxDelayMs past 7 days',
    inQueue({ backoff: { type: 'exponential', delayMs: 1, maxDelayMs: 7 * DAY + 1 } }),
    'queues.emails.backoff.maxDelayMs',
  ],
  [
    'a delayMs the default cap would cut short',
    inQueue({ backoff: { type: 'exponential', delayMs: 2 * HOUR } }),
    'queues.emails.backoff.maxDelayMs',
  ],
  [
    'jitter above 1',
    inQueue({ backoff: { type: 'exponential', delayMs: 1, jitter: 1.5 } }),
    'queues.emails.backoff.jitter',
  ],
  [
    'a negative jitter',
    inQueue({ backoff: { type: 'exponential', delayMs: 1, jitter: -0.1 } }),
    'queues.emails.backoff.jitter',
  ],
  [
    'a field of another policy type',
    inQueue({ backoff: { type: 'fixed', delayMs: 1, jitter: 0 } }),
    'queues.emails.backoff.jitter',
  ],
  [
    'a custom backoff without a function',
    inQueue({ backoff: { type: 'custom', delay: 5 } }),
    'queues.emails.backoff.delay',
  ],
];

describe('module, queue and processor options', () => {
  it.each(refused)('refuses %s, naming the option', (_what, options, option) => {
    const error = refusal(() => resolve(options));
    expect(error.option).toBe(option);
    expect(error.code).toBe('INVALID_OPTION');
    expect(error.message).toContain(`Option ${option}:`);
  });

  it('says what to fix when the url comes from an unset environment variable', () => {
    expect(refusal(() => resolve({ connection: { url: process.env.ECHOMQ_SURELY_UNSET } })).message).toBe(
      'Option connection.url: must be a non-empty string, got undefined (is its environment variable set?)',
    );
  });

  it('accepts every bound of every range', () => {
    const edges: Record<string, unknown>[] = [
      { connection: { host: 'redis' } },
      { connection: { port: 6380 } },
      { connection: { path: '/tmp/redis.sock' } },
      { connection: { cluster: { nodes: [{ host: '127.0.0.1', port: 7000 }] } } },
      // Durable writes on a cluster: each WAIT goes to the master of the confirmed key's slot.
      { connection: { cluster: { nodes: [{ host: '127.0.0.1', port: 7000 }] } }, durable: { replicas: 1 } },
      { connection: { url: 'redis://r:6379', db: 2, lazyConnect: true } },
      { connection, nodeId: 0, eventsMaxLen: 100, maxPayloadBytes: 1, idempotencyTtlMs: 1_000 },
      { connection, nodeId: 1023, eventsMaxLen: 1_000_000, maxPayloadBytes: PAYLOAD_MAX_BYTES },
      { connection, idempotencyTtlMs: 30 * DAY, shutdownGraceMs: 0, reaper: { intervalMs: 50, batch: 1 } },
      { connection, shutdownGraceMs: 600_000, reaper: { intervalMs: 60_000, batch: SCRIPT_BATCH_MAX } },
      { connection, commandTimeoutMs: 100, replayWindowMs: 5_000 },
      { connection, commandTimeoutMs: 120_000, replayWindowMs: 240_000 },
      { connection, commandTimeoutMs: 30_000 }, // exactly half the default replay window
      { connection, replayWindowMs: HOUR },
      inQueue({ concurrency: 1, leaseMs: 1_000, maxAttempts: 1, retainCompletedMs: 0 }),
      inQueue({ concurrency: 10_000, leaseMs: DAY, maxAttempts: 1_000_000, retainCompletedMs: 365 * DAY }),
      inQueue({ backoff: { type: 'fixed', delayMs: 0 } }),
      inQueue({ backoff: { type: 'fixed', delayMs: 7 * DAY } }),
      inQueue({ backoff: { type: 'exponential', delayMs: HOUR } }),
      inQueue({ backoff: { type: 'exponential', delayMs: 7 * DAY, maxDelayMs: 7 * DAY, jitter: 0 } }),
      inQueue({ backoff: { type: 'exponential', delayMs: 0, maxDelayMs: 0, jitter: 1 } }),
      inQueue({ backoff: { type: 'custom', delay: () => 5 } }),
      { connection, defaults: { concurrency: 3 }, queues: { 'a.b_c-1': { leaseMs: 5_000 } } },
    ];
    for (const options of edges) expect(() => resolve(options)).not.toThrow();
  });

  it('reads undefined as "not given", so unset environment variables fall back to defaults', () => {
    expect(
      resolve({
        connection,
        nodeId: undefined,
        maxPayloadBytes: undefined,
        reaper: { batch: undefined },
        defaults: undefined,
        queues: { emails: undefined, sms: { concurrency: undefined } },
      }),
    ).toEqual(MODULE_DEFAULTS);
  });

  it('resolves the documented defaults', () => {
    expect(resolve({ connection })).toEqual({
      keyPrefix: 'emq',
      eventsMaxLen: 10_000,
      maxPayloadBytes: 512 * 1024,
      idempotencyTtlMs: 24 * HOUR,
      shutdownGraceMs: 10_000,
      commandTimeoutMs: 5_000,
      replayWindowMs: 60_000,
      reaperIntervalMs: 30_000,
      reaperBatch: 500,
      tracing: false,
    });
    expect(QUEUE_DEFAULTS).toEqual({
      maxAttempts: 3,
      backoff: { type: 'exponential', delayMs: 1_000, maxDelayMs: HOUR, jitter: 0.5 },
      leaseMs: 30_000,
      concurrency: 10,
      retainCompletedMs: 0,
      timeoutMs: null,
      deadMaxJobs: 10_000,
      deadMaxAgeMs: null,
    });
  });

  it('resolves the values given', () => {
    expect(
      resolve({
        connection,
        eventsMaxLen: 500,
        commandTimeoutMs: 2_000,
        replayWindowMs: 10_000,
        reaper: { intervalMs: 250, batch: 100 },
      }),
    ).toEqual({
      ...MODULE_DEFAULTS,
      eventsMaxLen: 500,
      commandTimeoutMs: 2_000,
      replayWindowMs: 10_000,
      reaperIntervalMs: 250,
      reaperBatch: 100,
    });
  });

  describe("a @Processor's merged options", () => {
    it('are refused with a ProcessorDefinitionError naming the queue and the option, caused by an InvalidOptionError', () => {
      let caught: unknown;
      try {
        assertWorkerOptions('emails', { ...QUEUE_DEFAULTS, concurrency: 0 });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ProcessorDefinitionError);
      expect((caught as Error).message).toBe(
        "Queue 'emails': concurrency must be an integer from 1 to 10,000, got 0",
      );
      const cause = (caught as Error).cause;
      expect(cause).toBeInstanceOf(InvalidOptionError);
      expect((cause as InvalidOptionError).option).toBe('concurrency');
    });

    it.each([
      [{ leaseMs: 500 }, 'leaseMs'],
      [{ backoff: { type: 'exponential', delayMs: 10, maxDelayMs: 5 } }, 'backoff.maxDelayMs'],
      [{ concurency: 3 }, 'concurency'],
    ])('refuses %j', (override, option) => {
      const options = { ...QUEUE_DEFAULTS, ...override } as typeof QUEUE_DEFAULTS;
      expect(() => assertWorkerOptions('emails', options)).toThrow(new RegExp(`^Queue 'emails': ${option} `));
    });

    it('pass when in range', () => {
      const options = { ...QUEUE_DEFAULTS, concurrency: 10_000, leaseMs: 1_000 };
      expect(assertWorkerOptions('emails', options)).toBe(options);
    });
  });

  it('are documented in docs/options.md with the ranges the code enforces', () => {
    const doc = readFileSync(join(__dirname, '../../docs/options.md'), 'utf8');
    const ranges: [string, { min: number; max: number }][] = [
      ['nodeId', MODULE_OPTION_RANGES.nodeId],
      ['eventsMaxLen', MODULE_OPTION_RANGES.eventsMaxLen],
      ['maxPayloadBytes', MODULE_OPTION_RANGES.maxPayloadBytes],
      ['idempotencyTtlMs', MODULE_OPTION_RANGES.idempotencyTtlMs],
      ['shutdownGraceMs', MODULE_OPTION_RANGES.shutdownGraceMs],
      ['commandTimeoutMs', MODULE_OPTION_RANGES.commandTimeoutMs],
      ['replayWindowMs', MODULE_OPTION_RANGES.replayWindowMs],
      ['reaper.intervalMs', MODULE_OPTION_RANGES.reaperIntervalMs],
      ['reaper.batch', MODULE_OPTION_RANGES.reaperBatch],
      ['durable.replicas', MODULE_OPTION_RANGES.durableReplicas],
      ['durable.timeoutMs', MODULE_OPTION_RANGES.durableTimeoutMs],
      ['concurrency', QUEUE_OPTION_RANGES.concurrency],
      ['leaseMs', QUEUE_OPTION_RANGES.leaseMs],
      ['maxAttempts', QUEUE_OPTION_RANGES.maxAttempts],
      ['retainCompletedMs', QUEUE_OPTION_RANGES.retainCompletedMs],
      ['backoff.delayMs', QUEUE_OPTION_RANGES.backoffDelayMs],
      ['backoff.jitter', QUEUE_OPTION_RANGES.backoffJitter],
    ];
    for (const [option, { min, max }] of ranges) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${option}\``));
      expect(row).toContain(`${min.toLocaleString('en-US')} .. ${max.toLocaleString('en-US')}`);
    }
  });
});
