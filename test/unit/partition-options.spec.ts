import {
  InvalidOptionError,
  ProcessorDefinitionError,
  QUEUE_DEFAULTS,
  assertQueueOptions,
  resolveModuleSettings,
  resolveQueueOptions,
  type EchoMqModuleOptions,
} from '@app/echomq/internal';
import { assertWorkerOptions } from '@app/echomq/worker/processor-definition';

const connection = { url: 'redis://127.0.0.1:1' };

/** The InvalidOptionError the options are refused with, or undefined when they pass. */
function refusal(options: Partial<EchoMqModuleOptions>): InvalidOptionError | undefined {
  try {
    resolveModuleSettings({ connection, ...options });
    return undefined;
  } catch (error) {
    if (error instanceof InvalidOptionError) return error;
    throw error;
  }
}

describe('partition counts against the shared limits given with them', () => {
  it('refuses one layer that declares a count with a limit below it, naming the limit', () => {
    expect(refusal({ queues: { q: { partitions: 4, globalConcurrency: 3 } } })).toMatchObject({
      option: 'queues.q.globalConcurrency',
    });
    expect(refusal({ queues: { q: { partitions: 4, rateLimit: { max: 3, windowMs: 10 } } } })).toMatchObject({
      option: 'queues.q.rateLimit.max',
    });
    expect(refusal({ defaults: { partitions: 2, globalConcurrency: 1 } })).toMatchObject({
      option: 'defaults.globalConcurrency',
    });
    expect(() => assertQueueOptions({ partitions: 16, globalConcurrency: 15 }, '')).toThrow(
      /^Option globalConcurrency: is 15, below partitions 16/,
    );
  });

  it('refuses a count and a limit from module defaults and the queue that contradict each other', () => {
    const crossed = refusal({ defaults: { partitions: 3 }, queues: { q: { globalConcurrency: 2 } } });
    expect(crossed).toMatchObject({ option: 'queues.q.globalConcurrency' });
    expect(crossed?.message).toContain('defaults.partitions (of queue q) 3');
    expect(
      refusal({ defaults: { rateLimit: { max: 2, windowMs: 10 } }, queues: { q: { partitions: 3 } } }),
    ).toMatchObject({ option: 'defaults.rateLimit.max' });
  });

  it('passes limits at least the count, cleared ones, and a queue that overrides a small default', () => {
    expect(
      refusal({ queues: { q: { partitions: 4, globalConcurrency: 4, rateLimit: null } } }),
    ).toBeUndefined();
    expect(refusal({ defaults: { partitions: 1, globalConcurrency: 1 } })).toBeUndefined();
    expect(
      refusal({
        defaults: { globalConcurrency: 1 },
        queues: { q: { partitions: 2, globalConcurrency: null } },
      }),
    ).toBeUndefined();
    expect(
      refusal({ defaults: { partitions: 8 }, queues: { q: { partitions: 2, globalConcurrency: 2 } } }),
    ).toBeUndefined();
  });

  it("refuses a processor whose options, merged with the configuration's, contradict", () => {
    const merged = resolveQueueOptions({ partitions: 4 }, { globalConcurrency: 2 });
    expect(() => assertWorkerOptions('q', merged)).toThrow(ProcessorDefinitionError);
    expect(() => assertWorkerOptions('q', merged)).toThrow(/globalConcurrency is 2, below partitions 4/);
    expect(() =>
      assertWorkerOptions('q', { ...QUEUE_DEFAULTS, partitions: 4, globalConcurrency: 4 }),
    ).not.toThrow();
  });
});
