import {
  OnWorkerEvent,
  Processor,
  ProcessorExplorer,
  QueueService,
  type Job,
  type JobId,
  type WorkerCompletedEvent,
} from '@app/echomq/internal';
import { EchoMqHealthIndicator } from '@app/echomq/health';
import { RuntimeHooksRegistry } from '@app/echomq/observability/runtime-hooks-registry';
import { bootWithHealth } from '../health/support/boot';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { deferred, processorClass, waitUntil, type Deferred } from '../worker/fixtures/support';
import { laneIn } from './support/lanes';
import { completionsAcross, enqueueNumbered } from './support/completions';
import { useApps } from '../support/app-suite';

/** A processor of a 3-partition queue in each of several applications: the worker side of issue 14. */

const apps = useApps();

async function boot(providers: Parameters<typeof bootApp>[0], options: Parameters<typeof bootApp>[1]) {
  const app = await bootApp(providers, { shutdownGraceMs: 200, ...options });
  apps.push(app);
  return app;
}

/** Handlers that wait for the test: each running one is counted, per partition, until released. */
class HeldHandlers {
  readonly running = new Map<JobId, { partition: number | undefined; release: Deferred<void> }>();
  maxRunning = 0;
  readonly started: Job[] = [];

  readonly handler = async (job: Job): Promise<unknown> => {
    const release = deferred();
    this.running.set(job.id, { partition: job.partition, release });
    this.started.push(job);
    this.maxRunning = Math.max(this.maxRunning, this.running.size);
    await release.promise;
    this.running.delete(job.id);
    return { partition: job.partition };
  };

  /** How many run now in each partition, by partition index. */
  perPartition(count: number): number[] {
    const counts = Array.from({ length: count }, () => 0);
    for (const { partition } of this.running.values()) counts[partition!] += 1;
    return counts;
  }

  releaseAll(): void {
    for (const { release } of [...this.running.values()]) release.resolve();
  }

  releaseOne(partition: number): void {
    [...this.running.values()].find((each) => each.partition === partition)?.release.resolve();
  }
}

describe('a @Processor of a queue with 3 partitions', () => {
  it('runs every job exactly once across two worker applications, from every partition, naming the queue itself', async () => {
    const queue = uniqueQueue('wp-once');
    const runs = new Map<string, number>();
    const partitions = new Set<number | undefined>();
    const names = new Set<string>();
    // The first 8 handlers wait until 8 run at once: with concurrency 4 each, both applications serve.
    const together = deferred();
    let runningNow = 0;
    const handler = async (job: Job<{ n: number }>) => {
      runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
      partitions.add(job.partition);
      names.add(job.queue);
      runningNow += 1;
      if (runningNow === 8) together.resolve();
      if (runs.size <= 8) await together.promise;
      runningNow -= 1;
      return job.data.n;
    };
    const options = { queues: { [queue]: { partitions: 3, concurrency: 4 } } };
    const one = await boot([processorClass(queue, {}, handler)], options);
    const two = await boot([processorClass(queue, {}, handler)], options);
    const completed = completionsAcross([one, two], queue, 90);
    const queues = one.get(QueueService);
    const ids = await enqueueNumbered(queues, queue, 90);
    await completed;

    expect(runs.size).toBe(90);
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    expect(new Set(runs.keys())).toEqual(new Set(ids));
    expect(partitions).toEqual(new Set([0, 1, 2]));
    expect(names).toEqual(new Set([queue]));
    expect(await queues.counts(queue)).toMatchObject({ pending: 0, active: 0, schedule: 0, dead: 0 });
  });

  it('has one claim loop per partition, reported by physical queue, and none on the empty queue itself', async () => {
    const queue = uniqueQueue('wp-loops');
    const app = await boot([processorClass(queue, { partitions: 3 }, () => 1)], {});
    const explorer = app.get(ProcessorExplorer);
    expect(explorer.loopReports().map((report) => [report.queue, report.state])).toEqual([
      [`${queue}#0`, 'claiming'],
      [`${queue}#1`, 'claiming'],
      [`${queue}#2`, 'claiming'],
    ]);
    const loop = explorer.requireLoop(queue);
    expect(loop.queue).toBe(queue);
    expect(explorer.isServing(queue)).toBe(true);

    await explorer.stopQueue(queue);
    expect(explorer.isServing(queue)).toBe(false);
    expect(explorer.loopReports().map((report) => report.state)).toEqual(['stopped', 'stopped', 'stopped']);
    const queues = app.get(QueueService);
    const id = await queues.enqueue(queue, {});
    expect(await queues.getJob(queue, id)).toMatchObject({ state: 'pending' });

    expect(explorer.startQueue(queue)).toBe(loop);
    expect(explorer.loopReports().map((report) => report.state)).toEqual([
      'claiming',
      'claiming',
      'claiming',
    ]);
    await expect(queues.waitFor(queue, id, 5_000)).resolves.toBe(1);
  });

  it('hands @OnWorkerEvent handlers the queue itself, and job.partition the partition the job was in', async () => {
    const queue = uniqueQueue('wp-events');
    const heard: WorkerCompletedEvent[] = [];
    const all = deferred();
    @Processor(queue, { partitions: 3 })
    class Partitioned {
      process(job: Job) {
        return { queue: job.queue, partition: job.partition };
      }

      @OnWorkerEvent('completed')
      completed(event: WorkerCompletedEvent) {
        heard.push(event);
        if (heard.length === 3) all.resolve();
      }
    }
    const app = await boot([Partitioned], {});
    const queues = app.get(QueueService);
    const ids = [];
    for (let n = 0; n < 3; n++) ids.push(await queues.enqueue(queue, { n }));
    await all.promise;
    expect(heard.map((event) => event.queue)).toEqual([queue, queue, queue]);
    const results = heard.map((event) => event.result as { queue: string; partition: number });
    expect(new Set(results.map((result) => result.queue))).toEqual(new Set([queue]));
    expect(results.map((result) => result.partition).sort()).toEqual([0, 1, 2]);
    expect(new Set(heard.map((event) => event.id))).toEqual(new Set(ids));
  });
});

describe('what health and the runtime observers see of a partitioned queue', () => {
  it('health reports each partition’s loop; metrics and tracing hear the queue itself', async () => {
    const queue = uniqueQueue('wp-health');
    const app = await bootWithHealth([processorClass(queue, { partitions: 3 }, () => 'ok')], {
      shutdownGraceMs: 200,
    });
    apps.push(app);
    const named = new Set<string>();
    const settled = deferred();
    let settlements = 0;
    app.get(RuntimeHooksRegistry).register({
      claimed: (name, jobs) => {
        if (jobs.length > 0) named.add(`claimed ${name}`);
      },
      aroundHandler: (name, _record, run) => {
        named.add(`handler ${name}`);
        return run();
      },
      aroundSettle: (name, _record, _verb, run) => {
        named.add(`settle ${name}`);
        return run();
      },
      settled: (name) => {
        named.add(`settled ${name}`);
        if (++settlements === 3) settled.resolve();
      },
    });
    const queues = app.get(QueueService);
    for (let n = 0; n < 3; n++) await queues.enqueue(queue, { n });
    await settled.promise;
    expect(named).toEqual(
      new Set([`claimed ${queue}`, `handler ${queue}`, `settle ${queue}`, `settled ${queue}`]),
    );

    const health = (await app.get(EchoMqHealthIndicator).isHealthy('echomq')).echomq as unknown as {
      status: string;
      loops: Record<string, { state: string }>;
    };
    expect(health.status).toBe('up');
    expect(Object.keys(health.loops).sort()).toEqual([`${queue}#0`, `${queue}#1`, `${queue}#2`]);
    expect(Object.values(health.loops).map((loop) => loop.state)).toEqual([
      'claiming',
      'claiming',
      'claiming',
    ]);
  });
});

describe('the concurrency of a partitioned queue in one worker', () => {
  it('with every partition busy, gives each its share, and never runs more than the concurrency', async () => {
    const queue = uniqueQueue('wp-share');
    const held = new HeldHandlers();
    const app = await boot([processorClass(queue, { partitions: 3, concurrency: 6 }, held.handler)], {
      startProcessors: false,
    });
    const queues = app.get(QueueService);
    // 18 calls of one job each: the round robin puts 6 in each partition.
    for (let n = 0; n < 18; n++) await queues.enqueue(queue, { n });
    const explorer = app.get(ProcessorExplorer);
    explorer.startQueue(queue);
    await waitUntil(() => held.running.size === 6, 'six handlers to run');
    expect(held.perPartition(3)).toEqual([2, 2, 2]);
    expect(explorer.requireLoop(queue).inFlight).toBe(6);
    for (let round = 0; round < 2; round++) {
      const before = held.started.length;
      held.releaseAll();
      await waitUntil(
        () => held.started.length === before + 6 && held.running.size === 6,
        'the next six to run',
      );
      expect(held.perPartition(3)).toEqual([2, 2, 2]);
    }
    held.releaseAll();
    await waitUntil(
      async () => (await queues.counts(queue)).active === 0 && held.running.size === 0,
      'the rest',
    );
    expect(held.started).toHaveLength(18);
    expect(held.maxRunning).toBe(6);
  });

  it('lends idle partitions’ slots to a busy one, and gives the next freed slot to a partition that wakes', async () => {
    const queue = uniqueQueue('wp-lend');
    const held = new HeldHandlers();
    const app = await boot([processorClass(queue, { partitions: 3, concurrency: 4 }, held.handler)], {});
    const explorer = app.get(ProcessorExplorer);
    const queues = app.get(QueueService);
    const [busy, waking] = [laneIn(0, 3), laneIn(1, 3)];
    await queues.enqueueMany(
      queue,
      Array.from({ length: 6 }, (_, n) => ({ data: { n }, lane: busy })),
    );
    await waitUntil(() => held.running.size === 4, 'the busy partition to use all four slots');
    expect(held.perPartition(3)).toEqual([4, 0, 0]);

    await queues.enqueueMany(queue, [
      { data: { n: 'w1' }, lane: waking },
      { data: { n: 'w2' }, lane: waking },
    ]);
    // Woken by the enqueue, the second partition's loop finds every slot lent: it waits for one.
    const stepOf = (physical: string) =>
      explorer.loopReports().find((report) => report.queue === physical)?.step?.step;
    await waitUntil(() => stepOf(`${queue}#1`) === 'waiting for a slot', 'partition #1 to wait for a slot');
    expect(held.perPartition(3)).toEqual([4, 0, 0]);

    // The busy partition still has jobs waiting, but each slot it frees goes to the one that woke.
    for (const expected of [
      [3, 1, 0],
      [2, 2, 0],
    ]) {
      const before = held.started.length;
      held.releaseOne(0);
      await waitUntil(
        () => held.started.length === before + 1 && held.running.size === 4,
        'a slot taken again',
      );
      expect(held.perPartition(3)).toEqual(expected);
    }
    // The rest run as slots free: all eight, never more than four at once.
    for (let more = 0; more < 3 && held.started.length < 8; more++) {
      held.releaseAll();
      await waitUntil(() => held.running.size > 0 || held.started.length === 8, 'the next jobs');
    }
    held.releaseAll();
    await waitUntil(
      () => held.started.length === 8 && !explorer.requireLoop(queue).busy,
      'every job to finish',
    );
    expect(held.maxRunning).toBe(4);
  });

  it('with fewer slots than partitions, never runs more than the concurrency', async () => {
    const queue = uniqueQueue('wp-one');
    const held = new HeldHandlers();
    const app = await boot([processorClass(queue, { partitions: 3, concurrency: 1 }, held.handler)], {
      startProcessors: false,
    });
    const queues = app.get(QueueService);
    for (let n = 0; n < 6; n++) await queues.enqueue(queue, { n });
    const loop = app.get(ProcessorExplorer).startQueue(queue);
    const partitions: (number | undefined)[] = [];
    for (let n = 0; n < 6; n++) {
      await waitUntil(() => held.started.length === n + 1 && held.running.size === 1, `job ${n} to run`);
      partitions.push([...held.running.values()][0].partition);
      held.releaseAll();
    }
    await waitUntil(() => held.running.size === 0 && !loop.busy, 'the last job to finish');
    expect(held.maxRunning).toBe(1);
    // The one slot turns over the partitions.
    expect([...partitions].sort()).toEqual([0, 0, 1, 1, 2, 2]);
    expect(new Set(partitions.slice(0, 3))).toEqual(new Set([0, 1, 2]));
  });
});
