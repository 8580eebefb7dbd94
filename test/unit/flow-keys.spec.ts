import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
// The key builder and the Lua text only (no Nest, no script registry): the names the flow
// helpers compose inside Redis must be the keyspace module's, byte for byte.
import { queueKeys, type QueueKeys } from '@app/echomq/keyspace';
import { luaScript } from '@app/echomq/scripts/lua/prelude';

/** Returns the names FLOW_PRELUDE composes for ARGV's (level, lane) pairs, and its fixed keys. */
const FLOW_KEYS_LUA = luaScript(
  '-- flow keys (test only): the key names the flow helpers compose from KEYS[1]',
  `
local per_place = {}
for i = 1, #ARGV, 2 do
  local level, lane = tonumber(ARGV[i]), ARGV[i + 1]
  per_place[#per_place + 1] = { pending_key(level, lane), ready_key(level), lane_rate_key(lane) }
end
local fixed = { BASE, ROW_PREFIX, K_VTIME, K_HELD, K_TIMERS, K_PAUSED, K_LANE_ACTIVE,
  K_SETTINGS, K_RATE, K_HOLD, K_WAITING }
return { per_place, fixed }
`,
);

/** Reads a lane's weight and cap through lane_rules, which composes lane:<lane> and reads settings. */
const LANE_RULES_LUA = luaScript(
  '-- lane rules (test only)',
  `
local weight, cap = lane_rules(ARGV[1])
return { weight, cap or '' }
`,
);

/** Queue names no other suite uses: lane_rules' test writes settings. */
const suffix = randomBytes(4).toString('hex');

const PLACES: readonly [number, string][] = [
  [0, 'default'],
  [1, 'default'],
  [9, 'default'],
  [0, 'tenant-1'],
  [5, 'a.b:c@d+e=f_g'],
  [9, 'x'.repeat(64)],
];

describe('flow keys: the Lua helpers compose the keyspace module names', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(process.env.REDIS_URL as string);
  });
  afterAll(async () => {
    await redis.quit();
  });

  async function composed(keys: QueueKeys): Promise<[string[][], string[]]> {
    const args = PLACES.flatMap(([level, lane]) => [level, lane]);
    return (await redis.eval(FLOW_KEYS_LUA, 1, keys.fence, ...args)) as [string[][], string[]];
  }

  describe.each([
    ['the default prefix', queueKeys(`emails-${suffix}`)],
    ['another prefix and a dotted queue name', queueKeys(`billing.v2-eu_${suffix}`, 'acme')],
  ])('under %s', (_, keys) => {
    it('pending_key, ready_key and lane_rate_key equal pendingOf, ready and laneRate', async () => {
      const [perPlace] = await composed(keys);
      expect(perPlace).toEqual(
        PLACES.map(([level, lane]) => [keys.pendingOf(lane, level), keys.ready(level), keys.laneRate(lane)]),
      );
    });

    it('the default lane at level 0 is the plain pending set', async () => {
      const [perPlace] = await composed(keys);
      expect(perPlace[0][0]).toBe(keys.pending);
      expect(keys.pendingOf()).toBe(keys.pending);
    });

    it('the fixed keys equal the keyspace fields', async () => {
      const [, fixed] = await composed(keys);
      expect(fixed).toEqual([
        keys.base,
        keys.jobPrefix,
        keys.vtime,
        keys.held,
        keys.laneTimers,
        keys.pausedLanes,
        keys.laneActive,
        keys.settings,
        keys.rate,
        keys.hold,
        keys.waiting,
      ]);
    });

    it("lane_rules reads the lane's settings at laneSettings and the queue's at settings", async () => {
      const lane = 'tenant-7';
      await redis.del(keys.laneSettings(lane), keys.settings);
      expect(await redis.eval(LANE_RULES_LUA, 1, keys.fence, lane)).toEqual([1, '']);
      await redis.hset(keys.settings, 'lc', 4);
      expect(await redis.eval(LANE_RULES_LUA, 1, keys.fence, lane)).toEqual([1, 4]);
      await redis.hset(keys.laneSettings(lane), 'w', 7, 'k', 2);
      expect(await redis.eval(LANE_RULES_LUA, 1, keys.fence, lane)).toEqual([7, 2]);
      await redis.del(keys.laneSettings(lane), keys.settings);
    });
  });
});
