import type { INestApplication } from '@nestjs/common';
import { InvalidOptionError, Processor, QueueService, type Job } from '@app/echomq';
import { claimJobs, ProcessorExplorer, queueKeys } from '@app/echomq/internal';
import { validateModuleOptions } from '@app/echomq/module/validate-options';
import type { Redis } from 'ioredis';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { TestTracing } from './support/otel';

const queue = uniqueQueue('trace-off');

@Processor(queue)
class PlainProcessor {
  process(job: Job<{ n: number }>) {
    return job.data.n + 1;
  }
}

/** Tracing is off unless asked for, even in an application that has an OpenTelemetry SDK. */
describe('tracing off (the default)', () => {
  let tracing: TestTracing;
  let app: INestApplication;
  let redis: Redis;

  beforeAll(async () => {
    tracing = TestTracing.install();
    redis = connect();
    app = await bootApp([PlainProcessor]);
  });
  afterAll(async () => {
    await app.close();
    await redis.quit();
    await tracing.uninstall();
  });

  it('makes no span and writes no trace context, on the producer or the worker', async () => {
    const queues = app.get(QueueService);
    // The worker's own completions: the runner reports a settlement to its observers (which
    // would end a process span) before it emits this, so once all three came, any span is ended.
    const completed = new Map<string, unknown>();
    const allCompleted = new Promise<void>((resolve) =>
      app
        .get(ProcessorExplorer)
        .loop(queue)!
        .events.on('completed', (id, value) => {
          completed.set(id, value);
          if (completed.size === 3) resolve();
        }),
    );
    const ids = await tracing.tracer.startActiveSpan('request', async (span) => {
      const one = await queues.enqueue(queue, { n: 1 });
      const many = await queues.enqueueMany(queue, [{ data: { n: 2 } }, { data: { n: 3 } }]);
      span.end();
      return [one, ...many];
    });
    await allCompleted;
    expect(ids.map((id) => completed.get(id))).toEqual([2, 3, 4]);
    // Only the test's own span: none of EchoMQ's.
    expect(tracing.spans().map((span) => span.name)).toEqual(['request']);

    const paused = uniqueQueue('trace-off-row');
    const id = await tracing.tracer.startActiveSpan('request', async (span) => {
      const enqueued = await queues.enqueue(paused, { n: 1 });
      span.end();
      return enqueued;
    });
    expect(await redis.hkeys(queueKeys(paused).job(id))).not.toContain('tc');
    const { jobs } = await claimJobs(queues.context(paused), {
      count: 1,
      leaseMs: 30_000,
      claimantPrefix: 'off',
    });
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).not.toHaveProperty('traceContext');
  });
});

describe('the tracing option', () => {
  const connection = { url: 'redis://127.0.0.1:1' };

  it('is a boolean, false by default', () => {
    expect(validateModuleOptions({ connection }).tracing).toBe(false);
    expect(validateModuleOptions({ connection, tracing: true }).tracing).toBe(true);
    for (const bad of ['true', 1, { enabled: true }, null]) {
      expect(() => validateModuleOptions({ connection, tracing: bad })).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION', option: 'tracing' }) as Error,
      );
    }
  });

  it('on, is refused at boot when @opentelemetry/api is not installed; off, does not need it', () => {
    jest.isolateModules(() => {
      jest.doMock('@opentelemetry/api', () => {
        throw Object.assign(new Error("Cannot find module '@opentelemetry/api'"), {
          code: 'MODULE_NOT_FOUND',
        });
      });
      // Loaded afresh inside the isolated registry, where the API cannot be found.
      type Options = typeof import('@app/echomq/module/validate-options');
      type Errors = typeof import('@app/echomq/errors');
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const isolated = require('@app/echomq/module/validate-options') as Options;
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const errors = require('@app/echomq/errors') as Errors;
      expect(isolated.validateModuleOptions({ connection }).tracing).toBe(false);
      let refused: unknown;
      try {
        isolated.validateModuleOptions({ connection, tracing: true });
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(errors.InvalidOptionError);
      expect((refused as InvalidOptionError).message).toBe(
        'Option tracing: needs the package @opentelemetry/api (^1.3.0) installed next to EchoMQ: npm install @opentelemetry/api',
      );
    });
  });
});
