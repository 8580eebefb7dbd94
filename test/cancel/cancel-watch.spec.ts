import type { Redis } from 'ioredis';
import {
  CancelWatch,
  claimJobs,
  enqueueJobs,
  queueKeys,
  RedisConnections,
  removeJob,
  type ScriptContext,
} from '@app/echomq/internal';
import { jobRecord } from '../support/assertions';
import { connect, idMinter, redisUrl, scriptContext, uniqueQueue } from '../support/redis';
import { DeferredMap, waitUntil } from '../worker/fixtures/support';
import { blockedReaders, killReaders } from './support/cancels';

const mint = idMinter(43);
let redis: Redis;
let connections: RedisConnections;
let watch: CancelWatch;
let name: string;

/** Enqueues, claims and returns a job's claim: the job is active. */
async function activeJob(ctx: ScriptContext): Promise<{ id: string; attempt: number }> {
  const id = mint();
  await enqueueJobs(ctx, [jobRecord(id)], 60_000);
  const [claim] = (await claimJobs(ctx, { count: 1, leaseMs: 60_000, claimantPrefix: `watch-${id}` })).jobs;
  return { id, attempt: claim.attempt };
}

beforeAll(() => {
  redis = connect();
});

afterAll(() => {
  redis.disconnect();
});

beforeEach(() => {
  // A connection name of this test's own, so only its connections are looked up and killed.
  name = uniqueQueue('cancelwatch');
  connections = new RedisConnections({ connection: { url: redisUrl(), connectionName: name } });
  watch = new CancelWatch(connections);
});

afterEach(async () => {
  watch.close();
  await connections.onApplicationShutdown();
});

describe('CancelWatch: the removals of active jobs, as they happen', () => {
  it('follows every served queue with one blocked read on a standalone Redis, each queue told only its own', async () => {
    const [a, b] = [uniqueQueue('wa'), uniqueQueue('wb')].map((queue) => scriptContext(redis, queue));
    // Removed before the watch started: never told (an old entry must not reach a new claim).
    const before = await activeJob(a);
    await removeJob(a, before.id);

    const told = new DeferredMap<string>();
    const heard: string[] = [];
    const listen = (queue: string) => (id: string, attempt: number) => {
      heard.push(`${queue} ${id} ${attempt}`);
      told.get(id).resolve(queue);
    };
    const watchA = watch.watch(a.keys, listen('a'));
    const watchB = watch.watch(b.keys, listen('b'));
    await Promise.all([watchA.ready, watchB.ready]);
    expect(watch.readerCount).toBe(1);
    await waitUntil(async () => (await blockedReaders(redis, name)).length === 1, 'one blocked XREAD');

    const inA = await activeJob(a);
    const inB = await activeJob(b);
    await removeJob(a, inA.id);
    await removeJob(b, inB.id);
    await expect(told.get(inA.id).promise).resolves.toBe('a');
    await expect(told.get(inB.id).promise).resolves.toBe('b');
    expect(heard).toEqual([`a ${inA.id} ${inA.attempt}`, `b ${inB.id} ${inB.attempt}`]);

    // Only active jobs are cancelled: removing a pending one writes no entry.
    const pending = mint();
    await enqueueJobs(a, [jobRecord(pending)], 60_000);
    await removeJob(a, pending);
    expect((await redis.xrange(a.keys.cancels, '-', '+')).map(([, fields]) => fields[1])).toEqual([
      before.id,
      inA.id,
    ]);
    expect(heard).toHaveLength(2);
  });

  it('resumes after the last entry it read when its connection is killed: a removal made meanwhile still arrives', async () => {
    const ctx = scriptContext(redis, uniqueQueue('wkill'));
    const told = new DeferredMap<number>();
    const subscription = watch.watch(ctx.keys, (id, attempt) => told.get(id).resolve(attempt));
    await subscription.ready;
    const first = await activeJob(ctx);
    await removeJob(ctx, first.id);
    await expect(told.get(first.id).promise).resolves.toBe(first.attempt);

    await waitUntil(async () => (await blockedReaders(redis, name)).length === 1, 'the blocked XREAD');
    expect(await killReaders(redis, name)).toBe(1);
    const second = await activeJob(ctx);
    await removeJob(ctx, second.id);
    await expect(told.get(second.id).promise).resolves.toBe(second.attempt);
  });

  it('closes its reader and connection when the last queue stops being watched', async () => {
    const [a, b] = [uniqueQueue('wsa'), uniqueQueue('wsb')].map((queue) => queueKeys(queue));
    const first = watch.watch(a, () => undefined);
    const second = watch.watch(b, () => undefined);
    await Promise.all([first.ready, second.ready]);
    await waitUntil(async () => (await blockedReaders(redis, name)).length === 1, 'the blocked XREAD');

    first.stop();
    expect(watch.readerCount).toBe(1);
    second.stop();
    second.stop(); // a second stop changes nothing
    expect(watch.readerCount).toBe(0);
    await waitUntil(async () => (await blockedReaders(redis, name)).length === 0, 'no blocked XREAD left');
  });
});
