/**
 * What one claim and one complete script call cost inside Redis (INFO commandstats'
 * usec_per_call of EVALSHA), on a redis-server of its own:
 *
 *   npx ts-node -r tsconfig-paths/register --transpile-only bench/script-cost.ts [checkout]
 *
 * - claim of 1 job per call from a queue with one lane (what a worker at concurrency 1 sends);
 * - claim of 50 per call, per job, from one lane, 10 lanes and 1,000 lanes (one job each per turn);
 * - complete of 1 claim per call.
 * With a checkout path, its scripts (libs/echomq/src/scripts/lua/*.lua.ts) are timed instead,
 * against the same data: how the figures of docs/performance.md compare two versions.
 */
import 'reflect-metadata';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { enqueueJobs, installScripts, JOB_IDS, queueKeys, SnowflakeMinter } from '@app/echomq/internal';
import { RedisServer } from '../test/support/redis-server';

const checkout = process.argv[2];
const lua = (name: string, exported: string): string => {
  const root = checkout ?? join(__dirname, '..');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a checkout chosen at run time
  return (require(join(root, 'libs/echomq/src/scripts/lua', `${name}.lua.ts`)) as Record<string, string>)[
    exported
  ];
};
/** How many KEYS the checkout's complete script takes (its registry says; 5 before the wake key). */
const completeKeyCount = (): number => {
  try {
    const root = checkout ?? join(__dirname, '..');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a checkout chosen at run time
    const registry = require(join(root, 'libs/echomq/src/scripts/registry.ts')) as {
      SCRIPTS: { emqComplete: { keys: number } };
    };
    return registry.SCRIPTS.emqComplete.keys;
  } catch {
    return checkout ? 5 : 6;
  }
};
/** Scripts before flow control answered a claim with 2 header values, after it with 4. */
const CLAIM_HEADER = Number(process.env.CLAIM_HEADER ?? (checkout ? 2 : 4));
const mint = JOB_IDS.minter(new SnowflakeMinter(9));

async function usecPerCall(redis: Redis, run: () => Promise<void>): Promise<number> {
  await redis.call('CONFIG', 'RESETSTAT');
  await run();
  const line = (await redis.info('commandstats')).split('\n').find((l) => l.startsWith('cmdstat_evalsha'));
  return Number(/usec_per_call=([\d.]+)/.exec(line ?? '')?.[1]);
}

async function main(): Promise<void> {
  const server = await RedisServer.start();
  const redis = new Redis(server.url);
  const claimSha = (await redis.script('LOAD', lua('claim', 'CLAIM_LUA'))) as string;
  const completeSha = (await redis.script('LOAD', lua('complete', 'COMPLETE_LUA'))) as string;
  let request = 0;
  const fill = async (queue: string, total: number, lanes: number): Promise<void> => {
    const ctx = { redis: installScripts(redis), keys: queueKeys(queue), eventsMaxLen: 1000 };
    for (let i = 0; i < total; i += 500) {
      const jobs = Array.from({ length: 500 }, (_, j) => ({
        id: mint(),
        data: '{"x":1}',
        name: '',
        delayMs: 0,
        runAtMs: 0,
        idempotencyKey: '',
        ...(lanes > 1 ? { lane: `l${(i + j) % lanes}` } : {}),
      }));
      await enqueueJobs(ctx, jobs, 60_000);
    }
  };
  const claim = async (queue: string, count: number): Promise<unknown[]> => {
    const k = queueKeys(queue);
    const id = `r${++request}`;
    return (await redis.evalsha(
      claimSha,
      9,
      k.fence,
      k.reply(id),
      k.pending,
      k.active,
      k.schedule,
      k.metrics,
      k.events,
      k.wake,
      k.paused,
      k.jobPrefix,
      count,
      60_000,
      id,
      1000,
      500,
      60_000,
      3,
    )) as unknown[];
  };

  await fill('one', 5_000, 1);
  const held: [string, number, string][] = [];
  const perCall = await usecPerCall(redis, async () => {
    for (let i = 0; i < 5_000; i++) {
      const reply = await claim('one', 1);
      held.push([
        String(reply[CLAIM_HEADER]),
        Number(reply[CLAIM_HEADER + 1]),
        String(reply[CLAIM_HEADER + 2]),
      ]);
    }
  });
  const k = queueKeys('one');
  const completeKeys = completeKeyCount();
  const complete = await usecPerCall(redis, async () => {
    for (const [id, attempt, claimant] of held) {
      const reply = k.reply(`r${++request}`);
      const keys = [k.fence, reply, k.active, k.metrics, k.events, k.wake].slice(0, completeKeys);
      await redis.evalsha(
        completeSha,
        keys.length,
        ...keys,
        k.jobPrefix,
        0,
        1000,
        60_000,
        1,
        id,
        attempt,
        claimant,
        '',
      );
    }
  });
  const batch = async (queue: string, lanes: number): Promise<number> => {
    await fill(queue, 20_000, lanes);
    return (
      (await usecPerCall(redis, async () => {
        for (let i = 0; i < 400; i++) await claim(queue, 50);
      })) / 50
    );
  };
  const oneLane = await batch('batch-one', 1);
  const tenLanes = checkout ? NaN : await batch('batch-ten', 10);
  const manyLanes = checkout ? NaN : await batch('batch-many', 1_000);
  console.log(`claim of 1 job per call: ${perCall.toFixed(1)} µs per call`);
  console.log(`complete of 1 claim per call: ${complete.toFixed(1)} µs per call`);
  console.log(`claim of 50 per call, one lane: ${oneLane.toFixed(2)} µs per job`);
  if (!checkout) {
    console.log(`claim of 50 per call, 10 lanes: ${tenLanes.toFixed(2)} µs per job`);
    console.log(`claim of 50 per call, 1,000 lanes: ${manyLanes.toFixed(2)} µs per job`);
  }
  await redis.quit();
  await server.stop();
}

void main();
