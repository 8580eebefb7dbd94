import { Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import {
  CancelWatch,
  claimJobs,
  completeJobs,
  enqueueJobs,
  JobAbortedError,
  RedisConnections,
  removeJob,
  resolveQueueOptions,
  monotonicMs,
} from '@app/echomq/internal';
import { ChangeSignal } from '@app/echomq/worker/change-signal';
import { Completer } from '@app/echomq/worker/completer';
import { JobRunner } from '@app/echomq/worker/job-runner';
import { JobSlots } from '@app/echomq/worker/job-slots';
import { LeaseKeeper } from '@app/echomq/worker/lease-keeper';
import { RunningJob } from '@app/echomq/worker/running-job';
import { jobRecord } from '../support/assertions';
import { connect, idMinter, redisUrl, scriptContext, uniqueQueue } from '../support/redis';
import { deferred, withTimeout } from '../worker/fixtures/support';

/** A minute: only the cancel, never the heartbeat, can abort a handler within this test. */
const LEASE_MS = 60_000;
const REPLAY_MS = 60_000;
const WAIT_MS = 10_000;

const mint = idMinter(44);
let redis: Redis;
let connections: RedisConnections;
let watch: CancelWatch;

beforeAll(() => {
  redis = connect();
});

afterAll(() => {
  redis.disconnect();
});

beforeEach(() => {
  connections = new RedisConnections({ connection: { url: redisUrl() } });
  watch = new CancelWatch(connections);
});

afterEach(async () => {
  watch.close();
  await connections.onApplicationShutdown();
});

/** One claim loop's slots with the real runner and keeper (no timers: the keeper is never started). */
function slotsFor(queue: string, seen: (signal: AbortSignal) => void) {
  const ctx = scriptContext(redis, queue);
  const options = resolveQueueOptions({ leaseMs: LEASE_MS });
  const logger = new Logger(`test:${queue}`);
  const keeper = new LeaseKeeper(ctx, LEASE_MS, logger);
  const completer = new Completer(
    (completions, requestId) => completeJobs(ctx, completions, options.retainCompletedMs, requestId),
    { repeatForMs: REPLAY_MS },
  );
  const handler = (job: { signal: AbortSignal }): string => {
    seen(job.signal);
    return 'a late result';
  };
  const runner = new JobRunner(queue, options, ctx, keeper, completer, handler, logger, {
    repeatForMs: REPLAY_MS,
  });
  const slots = new JobSlots(runner, keeper, new ChangeSignal(), logger, queue, 1, REPLAY_MS);
  return { ctx, runner, slots };
}

describe('a removal read before its claim is launched', () => {
  it('aborts the job as it launches: the handler starts with its signal aborted, and its result is STALE', async () => {
    const queue = uniqueQueue('early-cancel');
    const signal = deferred<AbortSignal>();
    const { ctx, runner, slots } = slotsFor(queue, (s) => signal.resolve(s));
    const stale = deferred<string>();
    runner.events.on('stale', (id) => stale.resolve(id));
    const told = deferred<boolean>();
    const subscription = watch.watch(ctx.keys, (id, attempt) => told.resolve(slots.cancel(id, attempt)));
    await subscription.ready;

    const id = mint();
    await enqueueJobs(ctx, [jobRecord(id)], 60_000);
    const sentAt = monotonicMs();
    const [record] = (await claimJobs(ctx, { count: 1, leaseMs: LEASE_MS, claimantPrefix: `early-${id}` }))
      .jobs;
    // The claim ran, but its reply has not reached the loop yet (slow, or lost and read back by a
    // repeat): the job is active, and it is removed now.
    await expect(removeJob(ctx, id)).resolves.toBe('active');
    // The cancel is read first and matches no running job (without a memory of it, it is dropped).
    await expect(withTimeout(told.promise, WAIT_MS, 'the cancel to be read')).resolves.toBe(false);

    // Then the reply comes and the job is launched.
    void slots.launch(new RunningJob(record, sentAt, LEASE_MS, null));
    const seen = await withTimeout(signal.promise, WAIT_MS, 'the handler to start');
    expect(seen.aborted).toBe(true);
    expect(seen.reason).toBeInstanceOf(JobAbortedError);
    expect(seen.reason).toMatchObject({ reason: 'removed', id });
    await expect(withTimeout(stale.promise, WAIT_MS, 'the late result to be refused')).resolves.toBe(id);
    expect(runner.staleSettlements).toBe(1);
    subscription.stop();
  });

  it('aborts only the claim the cancel names: another attempt of the same id launches untouched', async () => {
    const queue = uniqueQueue('early-other');
    const signal = deferred<AbortSignal>();
    const { ctx, slots } = slotsFor(queue, (s) => signal.resolve(s));
    const id = mint();
    await enqueueJobs(ctx, [jobRecord(id)], 60_000);
    const sentAt = monotonicMs();
    const [record] = (await claimJobs(ctx, { count: 1, leaseMs: LEASE_MS, claimantPrefix: `other-${id}` }))
      .jobs;
    // A cancel of an earlier attempt of this id (and one of a job that runs elsewhere) is kept, not applied.
    expect(slots.cancel(id, record.attempt - 1)).toBe(false);
    expect(slots.cancel(mint(), 1)).toBe(false);

    void slots.launch(new RunningJob(record, sentAt, LEASE_MS, null));
    const seen = await withTimeout(signal.promise, WAIT_MS, 'the handler to start');
    expect(seen.aborted).toBe(false);
    await slots.settled();
  });
});
