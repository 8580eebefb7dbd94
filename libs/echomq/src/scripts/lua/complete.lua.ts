import { luaScript } from './prelude';

export const COMPLETE_LUA = luaScript(
  `
-- complete: active -> completed, for one or many claims at once. Each row is deleted, or
-- kept for ARGV[1] ms with its result, in no set (its state then reads 'completed').
-- Only claims that still hold their job (in active, same token and claimant) complete.
-- KEYS[1] active   KEYS[2] metrics   KEYS[3] events   KEYS[4] row prefix emq:{q}:job:
-- ARGV[1] keep ms (0 deletes the rows)   ARGV[2] events max length   ARGV[3] claim count N
-- ARGV[4..] N groups of 4: id, token (attempts), claimant, result (JSON, '' for none)
-- Returns: per claim 1 (completed) or 0 (stale: nothing changed for it)
-- Event:   one 'completed' entry for the call: ids (comma-separated) and results, a JSON
--          array of the results in the same order (null for none).
`,
  `
local keep = tonumber(ARGV[1])
local now = now_ms()
local out, ids, rows, results, done = {}, {}, {}, {}, {}
local stale = 0
for i = 0, tonumber(ARGV[3]) - 1 do
  local base = 4 + i * 4
  local id, result = ARGV[base], ARGV[base + 3]
  local row = KEYS[4] .. id
  -- done[id]: a claim presented twice in one call completes once (the id leaves active
  -- only at the end of the loop, so holds() alone would accept it again).
  if not done[id] and holds(row, ARGV[base + 1], ARGV[base + 2]) then
    done[id] = true
    ids[#ids + 1] = id
    rows[#rows + 1] = row
    results[#results + 1] = result == '' and 'null' or result
    if keep > 0 then
      redis.call('HSET', row, 'r', result, 'f', now)
      redis.call('HDEL', row, 'c')
      redis.call('PEXPIRE', row, keep)
    end
    out[#out + 1] = 1
  else
    stale = stale + 1
    out[#out + 1] = 0
  end
end
if #ids > 0 then
  redis.call('ZREM', KEYS[1], unpack(ids))
  if keep <= 0 then
    redis.call('DEL', unpack(rows))
  end
  redis.call('HINCRBY', KEYS[2], 'completed', #ids)
  emit(KEYS[3], ARGV[2], 'type', 'completed', 'ids', table.concat(ids, ','),
    'results', '[' .. table.concat(results, ',') .. ']')
end
bump(KEYS[2], 'stale', stale)
return out
`,
);
