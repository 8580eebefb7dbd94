import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService, UnrecoverableError, type Job, type JobToEnqueue } from '@app/echomq';
import { diagnoseQueue, runDoctor } from '@app/echomq/doctor';
import { claimJobs, queueKeys } from '@app/echomq/internal';
import { EchoMqTestKit } from '@app/echomq/testing';
import { uniquePrefix } from '../cli/support/cli';
import { snapshot } from '../support/assertions';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { closeAll, processorClass, waitUntil } from '../worker/fixtures/support';
import { doctor, findingsOf, prefixedContext } from './support/doctor';

interface Work {
  readonly fail?: 'once' | 'for good';
  readonly sleepMs?: number;
  /** Held until the test opens the gate: active work the doctor runs beside, whatever the speed. */
  readonly gated?: boolean;
}

/** Doctor runs made while the gated jobs hold their leases, and at most after the gate opens. */
const GATED_RUNS = 4;
const RUNS_MAX = 60;

describe('emq doctor on healthy queues', () => {
  let redis: Redis;
  let apps: INestApplication[] = [];

  beforeAll(() => {
    redis = connect();
  });

  afterEach(async () => {
    await closeAll(apps);
    apps = [];
  });

  afterAll(() => {
    redis?.disconnect();
  });

  it('finds nothing in a queue that uses every kind of state, and --repair changes nothing', async () => {
    const prefix = uniquePrefix();
    const queue = uniqueQueue('doc-ok');
    const Worker = processorClass<Work>(
      queue,
      { retainCompletedMs: 600_000, backoff: { type: 'fixed', delayMs: 600_000 } },
      (job: Job<Work>) => {
        if (job.data.fail === 'for good') throw new UnrecoverableError('no');
        if (job.data.fail === 'once' && job.attempt === 1) throw new Error('not yet');
        return 'ok';
      },
    );
    const app = await bootApp([Worker], { keyPrefix: prefix, startProcessors: false, nodeId: 8 });
    apps.push(app);
    const queues = app.get(QueueService);
    await queues.enqueueMany<Work>(queue, [
      { data: {} },
      { data: { fail: 'for good' } },
      { data: { fail: 'once' } },
    ]);
    await EchoMqTestKit.from(app).runUntilIdle(queue); // one completed (kept), one dead, one waiting out its backoff
    await queues.setLane(queue, 'weighted', { weight: 3, concurrency: 2 });
    await queues.pauseLane(queue, 'quiet');
    const waiting: JobToEnqueue<Work>[] = [
      { data: {} },
      { data: {}, lane: 'weighted', priority: 5 },
      { data: {}, lane: 'quiet', priority: 2 },
      { data: {}, lane: 'other' },
      { data: {}, delayMs: 600_000, lane: 'later' },
    ];
    await queues.enqueueMany(queue, waiting);
    await queues.upsertSchedule(queue, 'nightly', { cron: '0 3 * * *' }, { data: {} });
    await claimJobs(prefixedContext(redis, queue, prefix), {
      count: 1,
      leaseMs: 600_000,
      claimantPrefix: 'doctor-healthy-claim',
    });
    expect(await queues.counts(queue)).toEqual({ pending: 3, active: 1, schedule: 3, dead: 1 });

    const checked = await doctor(prefix, queue);
    expect(findingsOf(checked)).toEqual([]);
    expect(checked.code).toBe(0);
    expect(checked.report.queues[0].scanned).toEqual({ members: 8, rows: 9, laneSets: expect.any(Number) });

    const keys = queueKeys(queue, prefix);
    const before = await snapshot(redis, keys);
    const repaired = await doctor(prefix, queue, '--repair');
    expect(repaired).toMatchObject({ code: 0, report: { repair: true, healthy: true } });
    expect(findingsOf(repaired)).toEqual([]);
    expect(await snapshot(redis, keys)).toEqual(before);
    expect(await redis.hget(keys.metrics, 'repaired')).toBeNull();

    // The library's own surface, without the command line.
    const direct = await diagnoseQueue(queues.context(queue));
    expect(direct).toMatchObject({ queue, findings: [], unchecked: [] });
    // One job per script call: the same look, in many more calls.
    expect(await diagnoseQueue(queues.context(queue), { batch: 1 })).toEqual(direct);
    expect(await runDoctor([queues.context(queue)], { repair: true })).toMatchObject({
      healthy: true,
      repair: true,
    });
    await expect(diagnoseQueue(queues.context(queue), { idsShown: 0 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });

  it('finds nothing, checking and repairing, while workers process a busy queue', async () => {
    const prefix = uniquePrefix();
    const queue = uniqueQueue('doc-live');
    const completions = new Map<string, number>();
    let started = 0;
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const Worker = processorClass<Work>(
      queue,
      { concurrency: 8, laneConcurrency: 2, backoff: { type: 'fixed', delayMs: 20 }, maxAttempts: 3 },
      async (job: Job<Work>) => {
        if (job.data.gated) {
          started++;
          await gate;
        }
        // Work that takes a little time, so claims, heartbeats and settlements overlap the doctor's scans.
        await new Promise((resolve) => setTimeout(resolve, job.data.sleepMs ?? 0));
        if (job.data.fail === 'once' && job.attempt === 1) throw new Error('flaky');
        completions.set(job.id, (completions.get(job.id) ?? 0) + 1);
        return job.id;
      },
    );
    const app = await bootApp([Worker], { keyPrefix: prefix, nodeId: 9 });
    apps.push(app);
    const queues = app.get(QueueService);
    const jobs: JobToEnqueue<Work>[] = Array.from({ length: 400 }, (_, n) => ({
      data: {
        sleepMs: n % 7,
        ...(n % 5 === 0 && n % 100 !== 0 ? { fail: 'once' as const } : {}),
        ...(n % 100 === 0 ? { gated: true } : {}),
      },
      lane: `tenant-${n % 6}`,
      priority: n % 3,
      ...(n % 10 === 0 && n % 100 !== 0 ? { delayMs: 50 } : {}),
    }));
    const ids: string[] = [];
    for (let at = 0; at < jobs.length; at += 100)
      ids.push(...(await queues.enqueueMany(queue, jobs.slice(at, at + 100))));

    const gated = jobs.filter((job) => job.data.gated).length;
    let runs = 0;
    const doctorFindsNothing = async (): Promise<void> => {
      const run = await doctor(prefix, queue, ...(runs % 2 === 1 ? ['--repair'] : []));
      expect(findingsOf(run)).toEqual([]);
      expect(run.code).toBe(0);
      runs++;
    };
    // While the gated jobs hold their leases (heartbeats running), the rest flows around them.
    await waitUntil(() => started === gated, 'the gated jobs started');
    for (let i = 0; i < GATED_RUNS; i++) {
      await doctorFindsNothing();
      expect((await queues.counts(queue)).active).toBeGreaterThanOrEqual(gated);
    }
    openGate();
    while (completions.size < ids.length && runs < GATED_RUNS + RUNS_MAX) await doctorFindsNothing();
    await waitUntil(() => completions.size === ids.length, 'every job completed', 30_000);
    await waitUntil(async () => {
      const counts = await queues.counts(queue);
      return counts.pending + counts.active + counts.schedule + counts.dead === 0;
    }, 'the queue drained');
    expect([...completions.values()].every((n) => n === 1)).toBe(true);
    expect([...completions.keys()].sort()).toEqual([...ids].sort());
    expect(await redis.hget(queueKeys(queue, prefix).metrics, 'repaired')).toBeNull();
  }, 60_000);
});
