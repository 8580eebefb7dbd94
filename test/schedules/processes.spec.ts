import type { Redis } from 'ioredis';
import { queueKeys } from '@app/echomq/internal';
import { connect, uniqueQueue } from '../support/redis';
import { waitUntil } from '../worker/fixtures/support';
import { sweepAsAReaper } from './support/reaper-sweep';
import { ScheduleChild } from './support/schedule-child';
import { expectScheduleInvariants, scheduleState } from './support/schedule-invariants';

/**
 * Schedules across real processes (each a separate Node with its own connections): concurrent
 * upserts of one key, and a worker SIGKILLed in the middle of a run and started again.
 */
describe('schedules across processes', () => {
  let redis: Redis;
  const children: ScheduleChild[] = [];

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await Promise.all(children.map((child) => child.kill()));
    await redis.quit();
  });

  const spawn = (options: Parameters<typeof ScheduleChild.spawn>[0]): ScheduleChild => {
    const child = ScheduleChild.spawn(options);
    children.push(child);
    return child;
  };

  it('two processes upserting the same key at once leave exactly one next occurrence', async () => {
    const queue = uniqueQueue('sched-race');
    const spec = { everyMs: 3_600_000, data: { from: 'either' } };
    const racers = [0, 1].map(() => spawn({ mode: 'upsert', queue, key: 'race', spec }));
    await Promise.all(racers.map((child) => child.waitFor('ready')));
    for (const child of racers) child.send({ type: 'go' });
    const replies = (
      await Promise.all(racers.map(async (child) => (await child.waitFor('upserted'))[0]))
    ).map(({ outcome, nextId }) => ({ outcome, nextId }));
    // One created it; the other found the same definition waiting (or, had it run first, the roles swap).
    expect(replies.map((reply) => reply.outcome).sort()).toEqual(['created', 'unchanged']);
    expect(replies[0].nextId).toBe(replies[1].nextId);
    expect(await redis.zrange(queueKeys(queue).schedule, 0, -1)).toEqual([replies[0].nextId]);
    await expectScheduleInvariants(redis, queue);
    await Promise.all(racers.map((child) => child.kill()));
  });

  it('a worker with a declared schedule, SIGKILLed mid-run and restarted: one next occurrence, runs go on', async () => {
    const queue = uniqueQueue('sched-kill');
    const spec = { everyMs: 300, data: 'tick' };
    const first = spawn({ mode: 'worker', queue, key: 'tick', spec, block: true });
    const [{ id: killedRun }] = await first.waitFor('started');
    await first.kill();
    // Dead mid-run: its occurrences are still active (their leases run out); the schedule has
    // one next occurrence, waiting or (if it came due and was claimed before the kill) running.
    await expectScheduleInvariants(redis, queue);

    const second = spawn({ mode: 'worker', queue, key: 'tick', spec });
    const runs = await second.waitFor('started', 3);
    expect(new Set(runs.map((run) => run.id)).size).toBe(3);
    // The killed run's lease expires and the reaper returns it: it runs again, once.
    await waitUntil(
      () => second.received('started').some((run) => run.id === killedRun),
      'the killed run to be reaped and run again',
      15_000,
    );
    await second.kill();
    // Killed at any instant: its last run may have finished before its advance landed, which
    // the next reaper's sweep repairs (the state right after a kill is not the point here).
    await sweepAsAReaper(redis, queue);
    await expectScheduleInvariants(redis, queue);
    expect((await scheduleState(redis, queue)).waiting.get('tick')?.length ?? 0).toBeLessThanOrEqual(1);
  });
});
