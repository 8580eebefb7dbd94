/**
 * How long Redis is blocked by one script call at the batch bounds: enqueue of ENQUEUE_MANY_MAX
 * jobs (and, for comparison, of SCRIPT_BATCH_MAX), claim and complete of SCRIPT_BATCH_MAX, each
 * run `rounds` times on a fresh redis-server, timed by Redis itself (INFO commandstats,
 * usec_per_call of EVALSHA, and each call's own duration from the slow log). Every job carries
 * its own maxAttempts, so each row has a setting besides its payload (the heavier enqueue path).
 *
 *   npx ts-node -r tsconfig-paths/register --transpile-only bench/batch-cost.ts [rounds] [payload bytes]
 */
import { Redis } from 'ioredis';
import {
  claimJobs,
  completeJobs,
  ENQUEUE_MANY_MAX,
  enqueueJobs,
  installScripts,
  JOB_IDS,
  queueKeys,
  SCRIPT_BATCH_MAX,
  SnowflakeMinter,
  type ScriptContext,
} from '@app/echomq/internal';
import { RedisServer } from '../test/support/redis-server';

const rounds = Number(process.argv[2] ?? 20);
const payloadBytes = Number(process.argv[3] ?? 100);

async function evalshaMicros(redis: Redis): Promise<{ calls: number; usecPerCall: number }> {
  const stats = await redis.info('commandstats');
  const line = stats.split('\r\n').find((l) => l.startsWith('cmdstat_evalsha:')) ?? '';
  const calls = Number(/calls=(\d+)/.exec(line)?.[1] ?? 0);
  const usecPerCall = Number(/usec_per_call=([\d.]+)/.exec(line)?.[1] ?? 0);
  return { calls, usecPerCall };
}

async function measure(redis: Redis, label: string, run: () => Promise<void>): Promise<void> {
  await redis.config('RESETSTAT');
  // Every call lands in the slow log (threshold 0), which records each one's own duration.
  const slowlog: number[] = [];
  await redis.config('SET', 'slowlog-log-slower-than', '0');
  await redis.call('SLOWLOG', 'RESET');
  for (let round = 0; round < rounds; round++) {
    await run();
    const entries = (await redis.call('SLOWLOG', 'GET', '128')) as [number, number, number, string[]][];
    for (const entry of entries) if (String(entry[3][0]).toLowerCase() === 'evalsha') slowlog.push(entry[2]);
    await redis.call('SLOWLOG', 'RESET');
  }
  const { calls, usecPerCall } = await evalshaMicros(redis);
  slowlog.sort((a, b) => a - b);
  const p50 = slowlog[Math.floor(slowlog.length / 2)] ?? 0;
  const max = slowlog[slowlog.length - 1] ?? 0;
  console.log(
    `${label.padEnd(34)} ${String(calls).padStart(5)} calls   mean ${(usecPerCall / 1000).toFixed(2)} ms   ` +
      `p50 ${(p50 / 1000).toFixed(2)} ms   max ${(max / 1000).toFixed(2)} ms`,
  );
}

async function main(): Promise<void> {
  const server = await RedisServer.start();
  const redis = new Redis(server.url);
  const mint = JOB_IDS.minter(new SnowflakeMinter(7));
  const data = JSON.stringify({ pad: 'x'.repeat(Math.max(0, payloadBytes - 10)) });
  try {
    console.log(
      `redis ${(await redis.info('server')).match(/redis_version:(\S+)/)?.[1]}, ${payloadBytes}-byte payloads, ${rounds} rounds`,
    );
    let round = 0;
    const ctxFor = (queue = `batch-${round}`): ScriptContext => ({
      redis: installScripts(redis),
      keys: queueKeys(queue),
      eventsMaxLen: 10_000,
    });
    const batch = (size: number) =>
      Array.from({ length: size }, () => ({
        id: mint(),
        data,
        name: '',
        maxAttempts: 3,
        delayMs: 0,
        runAtMs: 0,
        idempotencyKey: '',
      }));
    await measure(redis, `enqueue (${ENQUEUE_MANY_MAX} jobs per call)`, async () => {
      round += 1;
      await enqueueJobs(ctxFor(), batch(ENQUEUE_MANY_MAX), 60_000);
    });
    let half = 0;
    await measure(redis, `enqueue (${SCRIPT_BATCH_MAX} jobs per call)`, async () => {
      half += 1;
      await enqueueJobs(ctxFor(`half-${half}`), batch(SCRIPT_BATCH_MAX), 60_000);
    });
    round = 0;
    const claimed: Awaited<ReturnType<typeof claimJobs>>[] = [];
    await measure(redis, `claim (${SCRIPT_BATCH_MAX} jobs per call)`, async () => {
      round += 1;
      claimed.push(
        await claimJobs(ctxFor(), { count: SCRIPT_BATCH_MAX, leaseMs: 60_000, claimantPrefix: `c${round}` }),
      );
    });
    round = 0;
    await measure(redis, `complete (${SCRIPT_BATCH_MAX} claims per call)`, async () => {
      const jobs = claimed[round].jobs;
      round += 1;
      await completeJobs(
        ctxFor(),
        jobs.map((job) => ({ claim: job, result: '{"ok":true}' })),
        0,
      );
    });
  } finally {
    await redis.quit();
    await server.destroy();
  }
}

void main();
