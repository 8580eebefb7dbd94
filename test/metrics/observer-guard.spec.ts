import { Test } from '@nestjs/testing';
import { EchoMqModule, Processor, QueueService, type Job } from '@app/echomq';
import { ProcessorExplorer } from '@app/echomq/internal';
import { RuntimeHooksRegistry } from '@app/echomq/observability/runtime-hooks-registry';
import { CapturedLog } from '../support/captured-log';
import { redisUrl, uniqueQueue } from '../support/redis';

/**
 * An observer of the worker runtime that throws from every plain call, standing in for the
 * module's RuntimeHooksRegistry (which isolates its observers): the runtime's own guards at the
 * call sites are all that is left between it and the jobs.
 */
const THROWING_OBSERVER = {
  register: () => undefined,
  claimed: () => {
    throw new Error('claimed broke');
  },
  settled: () => {
    throw new Error('settled broke');
  },
  reaped: () => undefined,
  aroundHandler: <T>(_queue: string, _record: unknown, run: () => Promise<T>) => run(),
  aroundSettle: <T>(_queue: string, _record: unknown, _verb: string, run: () => Promise<T>) => run(),
};

describe('an observer of the worker runtime that throws', () => {
  it('neither leaves claimed jobs unlaunched nor skips their worker events', async () => {
    const queue = uniqueQueue('throwing-observer');
    @Processor(queue, { concurrency: 4 })
    class Echo {
      process(job: Job) {
        return job.data;
      }
    }
    const log = new CapturedLog();
    const moduleRef = await Test.createTestingModule({
      imports: [EchoMqModule.forRoot({ connection: { url: redisUrl() } })],
      providers: [Echo],
    })
      .overrideProvider(RuntimeHooksRegistry)
      .useValue(THROWING_OBSERVER)
      .compile();
    const app = moduleRef.createNestApplication({ logger: log });
    await app.init();
    try {
      const events = app.get(ProcessorExplorer).requireLoop(queue).events;
      const completed: string[] = [];
      const all = new Promise<void>((resolve) =>
        events.on('completed', (id) => {
          completed.push(id);
          if (completed.length === 3) resolve();
        }),
      );
      const ids = await app.get(QueueService).enqueueMany(queue, [{ data: 1 }, { data: 2 }, { data: 3 }]);
      await all;
      expect(completed.sort()).toEqual([...ids].sort());
      expect(await app.get(QueueService).counts(queue)).toMatchObject({ pending: 0, active: 0 });
      // Both were called, threw, and were said.
      const errors = log.matching((line) => line.level === 'error').map((line) => line.message);
      expect(errors).toContain(`A claimed observer of ${queue} threw: claimed broke`);
      expect(
        errors.filter((line) => line === `A settled observer of ${queue} threw: settled broke`),
      ).toHaveLength(3);
    } finally {
      await app.close();
    }
  });
});
