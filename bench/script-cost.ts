/**
 * What one claim and one complete script call cost inside Redis (INFO commandstats'
 * usec_per_call of EVALSHA), on a redis-server of its own:
 *
 *   npx ts-node -r tsconfig-paths/register --transpile-only bench/script-cost.ts [checkout]
 *
 * - claim of 1 job per call from a queue with one lane (what a worker at concurrency 1 sends);
 * - claim of 50 per call, per job, from one lane, 10 lanes and 1,000 lanes (one job each per turn);
 * - complete of 1 claim per call;
 * - a drain's steady state at concurrency 50: claim 50, complete the 50 claimed before, with ~100-byte
 *   payloads, so the active set holds 50 to 100 jobs throughout (per job, each script apart, and the
 *   active set's encoding).
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
/**
 * Where a claim reply's first job starts: after its header (2 values before flow control, 4 after
 * it, 5 since crash isolation), at the first job id; CLAIM_HEADER overrides.
 */
const firstJobAt = (reply: unknown[]): number =>
  process.env.CLAIM_HEADER
    ? Number(process.env.CLAIM_HEADER)
    : reply.findIndex((value) => typeof value === 'string' && value.startsWith('JOB'));
const mint = JOB_IDS.minter(new SnowflakeMinter(9));

async function usecPerCall(redis: Redis, run: () => Promise<void>): Promise<number> {
  await redis.call('CONFIG', 'RESETSTAT');
  await run();
  const line = (await redis.info('commandstats')).split('\n').find((l) => l.startsWith('cmdstat_evalsha'));
  return Number(/usec_per_call=([\d.]+)/.exec(line ?? '')?.[1]);
}

/** The (id, token, claimant) of each job in a claim reply: ids are the strings that start with the brand. */
function claimsOf(reply: unknown[]): [string, number, string][] {
  const held: [string, number, string][] = [];
  for (let at = firstJobAt(reply); at >= 0 && at < reply.length; at++) {
    const id = reply[at];
    if (
      typeof id === 'string' &&
      id.length === 14 &&
      id.startsWith('JOB') &&
      typeof reply[at + 1] === 'number'
    ) {
      held.push([id, Number(reply[at + 1]), String(reply[at + 2])]);
    }
  }
  return held;
}

/** ~100 bytes of JSON, as the benchmark's jobs carry (two 63-byte chunks in a row). */
const PAYLOAD = JSON.stringify({ i: 1, t: Date.now(), s: 'x'.repeat(64) });

async function main(): Promise<void> {
  const server = await RedisServer.start();
  const redis = new Redis(server.url);
  const claimSha = (await redis.script('LOAD', lua('claim', 'CLAIM_LUA'))) as string;
  const completeSha = (await redis.script('LOAD', lua('complete', 'COMPLETE_LUA'))) as string;
  let request = 0;
  const fill = async (queue: string, total: number, lanes: number, data = '{"x":1}'): Promise<void> => {
    const ctx = { redis: installScripts(redis), keys: queueKeys(queue), eventsMaxLen: 1000 };
    for (let i = 0; i < total; i += 500) {
      const jobs = Array.from({ length: 500 }, (_, j) => ({
        id: mint(),
        data,
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
    const keys = [
      k.fence,
      k.reply(id),
      k.pending,
      k.active,
      k.schedule,
      k.metrics,
      k.events,
      k.wake,
      k.paused,
    ];
    const args = [k.jobPrefix, count, 60_000, id, 1000, 500, 60_000, 3];
    return (await redis.evalsha(claimSha, keys.length, ...keys, ...args)) as unknown[];
  };
  const completeKeys = completeKeyCount();
  const complete = async (queue: string, held: readonly [string, number, string][]): Promise<void> => {
    const k = queueKeys(queue);
    const reply = k.reply(`r${++request}`);
    const keys = [k.fence, reply, k.active, k.metrics, k.events, k.wake].slice(0, completeKeys);
    const args: (string | number)[] = [k.jobPrefix, 0, 1000, 60_000, held.length];
    for (const [id, attempt, claimant] of held) args.push(id, attempt, claimant, '');
    await redis.evalsha(completeSha, keys.length, ...keys, ...args);
  };

  await fill('one', 5_000, 1);
  const held: [string, number, string][] = [];
  const perCall = await usecPerCall(redis, async () => {
    for (let i = 0; i < 5_000; i++) held.push(...claimsOf(await claim('one', 1)));
  });
  const completeOne = await usecPerCall(redis, async () => {
    for (const one of held) await complete('one', [one]);
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

  // A drain at concurrency 50: each claim of 50 is followed by the completion of the 50 before it.
  await fill('drain', 20_000, 1, PAYLOAD);
  let previous = claimsOf(await claim('drain', 50));
  const claimUsec: number[] = [];
  const completeUsec: number[] = [];
  for (let i = 0; i < 390; i++) {
    let next: [string, number, string][] = [];
    claimUsec.push(await usecPerCall(redis, async () => void (next = claimsOf(await claim('drain', 50)))));
    completeUsec.push(await usecPerCall(redis, () => complete('drain', previous)));
    previous = next;
  }
  // Medians: a call the machine's other work preempted counts that time in its usec.
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1];
  const encoding = String(await redis.object('ENCODING', queueKeys('drain').active));
  console.log(`claim of 1 job per call: ${perCall.toFixed(1)} µs per call`);
  console.log(`complete of 1 claim per call: ${completeOne.toFixed(1)} µs per call`);
  console.log(`claim of 50 per call, one lane: ${oneLane.toFixed(2)} µs per job`);
  if (!checkout) {
    console.log(`claim of 50 per call, 10 lanes: ${tenLanes.toFixed(2)} µs per job`);
    console.log(`claim of 50 per call, 1,000 lanes: ${manyLanes.toFixed(2)} µs per job`);
  }
  console.log(
    `drain at concurrency 50 (active 50-100, ${encoding}): claim ${(median(claimUsec) / 50).toFixed(2)}` +
      ` + complete ${(median(completeUsec) / 50).toFixed(2)} µs per job (medians of 390 calls each)`,
  );
  await redis.quit();
  await server.stop();
}

void main();
