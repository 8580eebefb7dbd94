import { once } from 'node:events';
import {
  QueueService,
  RateLimitedError,
  partitionQueueName,
  queueKeys,
  type Job,
  type JobId,
  type WorkerEvents,
} from '@app/echomq/internal';
import { holdQueueUntil } from '@app/echomq/scripts/hold-queue';
import { bootApp } from '../support/nest';
import { useAppsAndRedis } from '../support/app-suite';
import { uniqueQueue } from '../support/redis';
import { loopOf, processorClass, serverNow } from '../worker/fixtures/support';
import { laneIn } from './support/lanes';

/**
 * A handler's RateLimitedError of scope 'queue' on a partitioned queue holds the whole queue:
 * every physical queue of its layout, until the same instant, not only the partition the job
 * ran in (docs/flow-control.md: "holds back its whole queue ... for every worker").
 */

const PARTITIONS = 3;
const suite = useAppsAndRedis();
const { apps } = suite;

/** The instant (server ms) a physical queue's hold ends, or -2 (no hold) / -1 (no expiry). */
async function holdEnd(physical: string): Promise<number> {
  return Number(await suite.redis.call('PEXPIRETIME', queueKeys(physical).hold));
}

interface Start {
  readonly id: JobId;
  readonly attempt: number;
  readonly attemptInBudget: number;
  readonly at: number;
}

describe("a RateLimitedError of scope 'queue' on a partitioned queue", () => {
  it('holds every partition and the queue itself until the same instant, and no partition starts a job before it', async () => {
    const queue = uniqueQueue('fix2-hold');
    const retryAfterMs = 1_500;
    const starts: Start[] = [];
    const handler = async (job: Job<string>) => {
      starts.push({
        id: job.id,
        attempt: job.attempt,
        attemptInBudget: job.attemptInBudget,
        at: await serverNow(suite.redis),
      });
      if (job.data === 'limited' && job.attempt === 1) throw new RateLimitedError(retryAfterMs);
      return job.partition;
    };
    const options = { partitions: PARTITIONS, concurrency: 3, maxAttempts: 1 };
    const app = await bootApp([processorClass(queue, options, handler)], { shutdownGraceMs: 200 });
    apps.push(app);
    const queues = app.get(QueueService);
    // Partition 2 is held already, for longer: that hold must stay as it is.
    const longer = (await serverNow(suite.redis)) + 60_000;
    await holdQueueUntil(queues.context(partitionQueueName(queue, 2)), longer);
    const throttled = once(loopOf(app, queue).events, 'throttled') as Promise<WorkerEvents['throttled']>;

    const limited = await queues.enqueue(queue, 'limited', { lane: laneIn(0, PARTITIONS, 'hold') });
    const [throttledId, heldFor, scope] = await throttled;
    expect([throttledId, heldFor, scope]).toEqual([limited, retryAfterMs, 'queue']);

    const until = await holdEnd(partitionQueueName(queue, 0));
    expect(until).toBeGreaterThan(0);
    // The same instant everywhere else, read back as PTTL + TIME: exact to the millisecond
    // that can tick between those two commands.
    for (const physical of [queue, partitionQueueName(queue, 1)]) {
      const end = await holdEnd(physical);
      expect([physical, Math.abs(end - until) <= 1]).toEqual([physical, true]);
    }
    expect(await holdEnd(partitionQueueName(queue, 2))).toBe(longer);

    // Partition 1 used no flow control before (lanes alone set no flow mark), and still its
    // claims read the hold: a job enqueued there meanwhile waits for the hold's end.
    const other = await queues.enqueue(queue, 'other', { lane: laneIn(1, PARTITIONS, 'hold') });
    await expect(queues.waitFor(queue, other, 10_000)).resolves.toBe(1);
    await expect(queues.waitFor(queue, limited, 10_000)).resolves.toBe(0);

    // The limited job went back as an unspent attempt (maxAttempts 1, and it ran again).
    const byJob = starts.map(({ id, attempt, attemptInBudget }) => [id, attempt, attemptInBudget]);
    expect(byJob).toEqual(
      expect.arrayContaining([
        [limited, 1, 1],
        [limited, 2, 1],
        [other, 1, 1],
      ]),
    );
    expect(byJob).toHaveLength(3);
    for (const start of starts.slice(1)) expect(start.at).toBeGreaterThanOrEqual(until);
  });

  it('holds nothing else on an unpartitioned queue', async () => {
    const queue = uniqueQueue('fix2-hold-plain');
    const throwOnce = { left: 1 };
    const handler = () => {
      if (throwOnce.left-- > 0) throw new RateLimitedError(200);
      return 'done';
    };
    const app = await bootApp([processorClass(queue, { maxAttempts: 1 }, handler)], { shutdownGraceMs: 200 });
    apps.push(app);
    const queues = app.get(QueueService);
    const throttled = once(loopOf(app, queue).events, 'throttled');
    const id = await queues.enqueue(queue, 'x');
    await throttled;
    expect(await holdEnd(queue)).toBeGreaterThan(0);
    // No partition of it was touched: their keys do not exist.
    expect(await holdEnd(partitionQueueName(queue, 0))).toBe(-2);
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toBe('done');
  });
});
