/**
 * Model-based property test of the job lifecycle (DESIGN.md §1 and §8).
 *
 * Random sequences of enqueue / claim / complete / fail / extend / release / reap / promote /
 * retry / remove / pause and time passing run against the real scripts on a real Redis and,
 * side by side, against the reference model in ./model/reference.ts. After every step the
 * invariants are checked against Redis (./model/system.ts). Stale calls are issued on purpose
 * (old claims after a reap and re-claim, after a fail, release or remove; forged tokens and
 * claimants) and must change nothing.
 *
 * Each run uses a fresh queue, deleted afterwards, and runs at most MAX_STEPS commands (up to
 * MAX_COMMANDS are generated, as a command that does not apply in the current state is skipped).
 * The seed is fast-check's default random one, so every run explores new sequences; a failure
 * prints its seed and path, the shrunk command list, and the steps with their ids resolved.
 * To replay it:
 *   EMQ_MODEL_SEED=<seed> EMQ_MODEL_PATH=<path> npx jest test/lifecycle/model
 * EMQ_MODEL_RUNS=<n> changes the number of runs; EMQ_MODEL_STATS=1 prints how often each kind of
 * step and outcome ran (to see what the generator reaches).
 */
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { connect, idMinter, uniqueQueue } from '../support/redis';
import { commandArbitrary } from './model/commands';
import { Model } from './model/reference';
import { coverage, serverTime, System } from './model/system';

const NUM_RUNS = Number(process.env.EMQ_MODEL_RUNS ?? 300);
/** Generated per sequence; at most MAX_STEPS (40) of them run. */
const MAX_COMMANDS = 80;

function replayParameters(): fc.Parameters<unknown> {
  const seed = process.env.EMQ_MODEL_SEED;
  const path = process.env.EMQ_MODEL_PATH;
  if (seed === undefined) return {};
  // A fixed seed only when asked for, and then said out loud.
  console.log(`model test replaying seed ${seed}${path ? ` path ${path}` : ''}`);
  return { seed: Number(seed), ...(path ? { path, endOnFailure: true } : {}) };
}

describe('the job lifecycle against a reference model', () => {
  let redis: Redis;
  const mint = idMinter(7);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    if (process.env.EMQ_MODEL_STATS) {
      const lines = [...coverage].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${v}\t${k}`);
      console.log(`model test coverage (steps, summed over runs):\n${lines.join('\n')}`);
    }
    await redis.quit();
  });

  it(
    `keeps every invariant over ${NUM_RUNS} random command sequences`,
    async () => {
      const property = fc.asyncProperty(
        fc.commands([commandArbitrary], { maxCommands: MAX_COMMANDS, size: 'max' }),
        async (cmds) => {
          const system = await System.open(redis, uniqueQueue('model'), mint);
          const model = new Model((await serverTime(redis)) - 86_400_000);
          try {
            await fc.asyncModelRun(() => ({ model, real: system }), cmds);
            await system.verifyViews(model);
          } finally {
            await system.cleanup(model.steps);
          }
        },
      );
      await fc.assert(property, { numRuns: NUM_RUNS, ...replayParameters() });
    },
    Math.max(120_000, NUM_RUNS * 400),
  );
});
