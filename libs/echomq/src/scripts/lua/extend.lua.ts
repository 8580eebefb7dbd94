import { luaScript } from './prelude';

export const EXTEND_LUA = luaScript(
  `
-- extend: active -> active with a new lease deadline (the heartbeat), for many jobs at once.
-- Only claims that still hold their job (in active, same token and claimant) are extended.
-- KEYS[1] active   KEYS[2] metrics   KEYS[3] events   KEYS[4] row prefix emq:{q}:job:
-- ARGV[1] lease ms   ARGV[2] events max length   ARGV[3] claim count N
-- ARGV[4..] N groups of 3: id, token (attempts), claimant
-- Returns: { new deadline (ms), then per claim 1 (extended) or 0 (stale: the lease is lost) }
`,
  `
local deadline = now_ms() + tonumber(ARGV[1])
local out = { deadline }
local ids = {}
local stale = 0
for i = 0, tonumber(ARGV[3]) - 1 do
  local base = 4 + i * 3
  local id = ARGV[base]
  if holds(KEYS[4] .. id, ARGV[base + 1], ARGV[base + 2]) then
    redis.call('ZADD', KEYS[1], 'XX', deadline, id)
    ids[#ids + 1] = id
    out[#out + 1] = 1
  else
    stale = stale + 1
    out[#out + 1] = 0
  end
end
if #ids > 0 then
  redis.call('HINCRBY', KEYS[2], 'extended', #ids)
  emit(KEYS[3], ARGV[2], 'type', 'extended', 'ids', table.concat(ids, ','))
end
bump(KEYS[2], 'stale', stale)
return out
`,
);
