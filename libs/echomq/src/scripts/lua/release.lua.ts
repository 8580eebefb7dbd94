import { luaScript } from './prelude';

export const RELEASE_LUA = luaScript(
  `
-- release: active -> pending without spending the retry budget (graceful shutdown
-- hands back claimed work). attempts still only grows; the budget base moves up by one
-- so the released claim does not count against the job.
-- KEYS[1] active   KEYS[2] pending   KEYS[3] metrics   KEYS[4] events   KEYS[5] wake
-- KEYS[6] row prefix emq:{q}:job:
-- ARGV[1] events max length   ARGV[2] claim count N
-- ARGV[3..] N groups of 3: id, token (attempts), claimant
-- Returns: per claim 1 (released) or 0 (stale: changed nothing)
`,
  `
local out, ids = {}, {}
local stale = 0
for i = 0, tonumber(ARGV[2]) - 1 do
  local base = 3 + i * 3
  local id = ARGV[base]
  local row = KEYS[6] .. id
  if holds(row, ARGV[base + 1], ARGV[base + 2]) then
    redis.call('ZREM', KEYS[1], id)
    redis.call('ZADD', KEYS[2], 0, id)
    redis.call('HINCRBY', row, 'b', 1)
    redis.call('HDEL', row, 'c')
    ids[#ids + 1] = id
    out[#out + 1] = 1
  else
    stale = stale + 1
    out[#out + 1] = 0
  end
end
if #ids > 0 then
  redis.call('HINCRBY', KEYS[3], 'released', #ids)
  emit(KEYS[4], ARGV[1], 'type', 'released', 'ids', table.concat(ids, ','))
  wake(KEYS[5])
end
bump(KEYS[3], 'stale', stale)
return out
`,
);
