import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { JOB_IDS, SnowflakeMinter, snowflakeParts } from '@app/echomq/internal';
import { SNOWFLAKE_EPOCH_MS } from '@app/echomq/ids/snowflake';
import { luaScript } from '@app/echomq/scripts/lua/prelude';
import { connect } from '../support/redis';

/**
 * Dead is trimmed by age by comparing ids byte-wise with the first id of the cutoff
 * millisecond, which the Lua helper first_id_at encodes in doubles; here it is held to the
 * TypeScript encoder and decoder.
 */
describe('the Lua cutoff id (first_id_at) against the TypeScript ids', () => {
  const LUA = luaScript('-- first_id_at for tests', 'return first_id_at(tonumber(ARGV[1]))');
  const LAST_MS = SNOWFLAKE_EPOCH_MS + 2 ** 42 - 1; // the last millisecond 42 bits hold
  let redis: Redis;

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  const luaCutoff = async (ms: number): Promise<string> => (await redis.eval(LUA, 0, ms)) as string;
  const tsCutoff = (ms: number): string =>
    JOB_IDS.format(BigInt(Math.max(ms - SNOWFLAKE_EPOCH_MS, 0)) << 22n);

  it('is the id of node 0, sequence 0 at that millisecond, to the millisecond', async () => {
    for (const ms of [SNOWFLAKE_EPOCH_MS, SNOWFLAKE_EPOCH_MS + 1, Date.UTC(2026, 5, 1, 12), LAST_MS]) {
      const id = await luaCutoff(ms);
      expect(id).toBe(tsCutoff(ms));
      expect(JOB_IDS.parts(id)).toEqual({ timeMs: ms, node: 0, sequence: 0 });
    }
  });

  it('matches the TypeScript encoder over the whole 42-bit range', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: SNOWFLAKE_EPOCH_MS, max: LAST_MS }), async (ms) => {
        expect(await luaCutoff(ms)).toBe(tsCutoff(ms));
      }),
      { numRuns: 300 },
    );
  });

  it('sorts after every id minted earlier and before none minted at or after it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: SNOWFLAKE_EPOCH_MS + 1, max: Date.UTC(2100, 0, 1) }),
        fc.integer({ min: 0, max: 1023 }),
        async (ms, node) => {
          const cutoff = await luaCutoff(ms);
          const before = JOB_IDS.minter(new SnowflakeMinter(node, () => ms - 1));
          const at = JOB_IDS.minter(new SnowflakeMinter(node, () => ms));
          for (let i = 0; i < 3; i++) {
            const early = before();
            if (snowflakeParts(JOB_IDS.decode(early)!).timeMs < ms) expect(early < cutoff).toBe(true);
            expect(at() >= cutoff).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('clamps an instant before the epoch to the smallest id', async () => {
    expect(await luaCutoff(SNOWFLAKE_EPOCH_MS - 86_400_000)).toBe(`JOB${'0'.repeat(11)}`);
  });
});
