import { Logger } from '@nestjs/common';
import type { ClaimedJobRecord } from '@app/echomq/internal';
import type { RuntimeHooks } from '@app/echomq/observability/runtime-hooks';
import { RuntimeHooksRegistry } from '@app/echomq/observability/runtime-hooks-registry';

const record = { id: 'JOB00000000001', attempt: 1 } as ClaimedJobRecord;

/**
 * The seam the worker runtime calls its observers through: whatever an observer's wrapper does
 * (throws, rejects before or after calling run, never calls it), the handler or settlement it
 * wraps runs exactly once and the runtime gets run's own outcome.
 */
describe('RuntimeHooksRegistry: wrappers that fail', () => {
  let logged: string[];

  beforeEach(() => {
    logged = [];
    jest.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => {
      logged.push(String(message));
    });
  });
  afterEach(() => jest.restoreAllMocks());

  function registry(...observers: RuntimeHooks[]): RuntimeHooksRegistry {
    const hooks = new RuntimeHooksRegistry();
    for (const observer of observers) hooks.register(observer);
    return hooks;
  }

  /** A run that counts its calls and resolves to `value` (or rejects with `error`). */
  function counted<T>(value: T, error?: Error) {
    const calls = { n: 0 };
    const run = (): Promise<T> => {
      calls.n += 1;
      return error ? Promise.reject(error) : Promise.resolve(value);
    };
    return { calls, run };
  }

  it('an async wrapper that rejects before calling run: the settlement runs unwrapped, once', async () => {
    const broken: RuntimeHooks = {
      // As an async observer whose span setup throws (a span processor's onStart).
      async aroundSettle() {
        await Promise.resolve();
        throw new Error('onStart threw');
      },
    };
    const { calls, run } = counted('settled');
    await expect(registry(broken).aroundSettle('q', record, 'complete', run)).resolves.toBe('settled');
    expect(calls.n).toBe(1);
    expect(logged).toEqual(['A aroundSettle observer threw: onStart threw']);
  });

  it('the same for a handler, and the observers around it still wrap it', async () => {
    const order: string[] = [];
    const outer: RuntimeHooks = {
      async aroundHandler(_queue, _record, run) {
        order.push('outer in');
        const value = await run();
        order.push('outer out');
        return value;
      },
    };
    const broken: RuntimeHooks = {
      aroundHandler: () => Promise.reject(new Error('setup failed')),
    };
    const { calls, run } = counted(42);
    await expect(registry(outer, broken).aroundHandler('q', record, run)).resolves.toBe(42);
    expect(calls.n).toBe(1);
    expect(order).toEqual(['outer in', 'outer out']);
    expect(logged).toEqual(['A aroundHandler observer threw: setup failed']);
  });

  it('a wrapper that rejects after calling run: run is not repeated, and its value wins', async () => {
    const broken: RuntimeHooks = {
      async aroundSettle(_queue, _record, _verb, run) {
        await run();
        throw new Error('onEnd threw');
      },
    };
    const { calls, run } = counted(['done']);
    await expect(registry(broken).aroundSettle('q', record, 'fail', run)).resolves.toEqual(['done']);
    expect(calls.n).toBe(1);
    expect(logged).toEqual(['A aroundSettle observer threw: onEnd threw']);
  });

  it("a wrapper that passes on run's own rejection: that rejection, and nothing logged", async () => {
    const passing: RuntimeHooks = {
      async aroundHandler(_queue, _record, run) {
        return await run();
      },
    };
    const thrown = new Error('the handler failed');
    const { calls, run } = counted(0, thrown);
    await expect(registry(passing).aroundHandler('q', record, run)).rejects.toBe(thrown);
    expect(calls.n).toBe(1);
    expect(logged).toEqual([]);
  });

  it("a wrapper that replaces run's rejection with its own: run's rejection wins", async () => {
    const replacing: RuntimeHooks = {
      async aroundHandler(_queue, _record, run) {
        await run().catch(() => undefined);
        throw new Error('observer failed');
      },
    };
    const thrown = new Error('the handler failed');
    const { calls, run } = counted(0, thrown);
    await expect(registry(replacing).aroundHandler('q', record, run)).rejects.toBe(thrown);
    expect(calls.n).toBe(1);
    expect(logged).toEqual(['A aroundHandler observer threw: observer failed']);
  });

  it('a wrapper that resolves without calling run, or throws at once: run still runs, once', async () => {
    const skipping: RuntimeHooks = {
      aroundSettle: <T>() => Promise.resolve(undefined as T),
    };
    const throwing: RuntimeHooks = {
      aroundSettle: () => {
        throw new Error('sync');
      },
    };
    const { calls, run } = counted('settled');
    await expect(registry(skipping).aroundSettle('q', record, 'release', run)).resolves.toBe('settled');
    await expect(registry(throwing).aroundSettle('q', record, 'release', run)).resolves.toBe('settled');
    expect(calls.n).toBe(2);
    expect(logged).toEqual([
      'A aroundSettle observer threw: it returned without calling run',
      'A aroundSettle observer threw: sync',
    ]);
  });
});
