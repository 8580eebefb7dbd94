import { CONTROL_CHUNK_MAX, CONTROL_LUA } from './control';
import { PENDING_SETS_LUA, PENDING_WALK_LUA, WALK_SETS_MAX, WALKS_MAX } from './pending-sets';
import { luaScript } from './prelude';

export const DRAIN_LUA = luaScript(
  `
-- drain: pending (every lane, every level) and schedule -> gone, one chunk per call: pending
-- set by set along the walk (at most ${WALK_SETS_MAX} sets a call, each set in mint order), then
-- once the walk is done schedule soonest first. Active and dead jobs stay. Rows and their
-- idempotency keys go (see discard); a lane left without work leaves ready / held.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] schedule   KEYS[4] metrics
-- KEYS[5] events   (the pending sets are found through ready:<level> and held, from the base)
-- ARGV[1] 1 keep scheduled jobs, 0 drain them too   ARGV[2] most jobs this call, 1 .. ${CONTROL_CHUNK_MAX}
-- ARGV[3] events max length   ARGV[4] replay window ms
-- ARGV[5] the walk's cursor: p for the first call, then the one the last call returned
-- Returns: { jobs removed by this call, 1 when there is more to do (call again) else 0, the
--          cursor for the next call }; a repeated request returns its first reply. A walk
--          that ends having removed jobs, or with a ready index or the plain pending set not
--          empty, or with held's size changed (lanes joined or moved behind it), begins
--          another, up to ${WALKS_MAX} walks (walk_next); once done, the schedule phase's calls
--          (cursor '') begin no walk.
-- Event:   'drained' with the ids removed (none when there were none).
`,
  `${PENDING_SETS_LUA}${PENDING_WALK_LUA}${CONTROL_LUA}
local keep_scheduled = int_arg(1, 0, 1) == 1
local n = int_arg(2, 1, ${CONTROL_CHUNK_MAX})
local maxlen = int_arg(3, 1, 1000000000)
local replay_ttl = int_arg(4, 1, 1000000000000)
local cursor = walk_cursor_arg(5)
local prior = replayed(KEYS[2])
if prior then
  local removed, more, next_cursor = string.match(prior, '^(%d+):(%d):(.*)$')
  return { tonumber(removed), tonumber(more), next_cursor }
end
-- Draining frees room, so a full Redis must let it run; also a call that finds nothing, whose
-- reply record is then its first write (the last call of a drain).
runs_when_full()
local ids, position = take_pending(cursor, ${WALK_SETS_MAX}, n, nil, nil)
local next_cursor = walk_next(cursor, position, #ids > 0, true)
if not keep_scheduled and position == '' and #ids < n then
  local due = redis.call('ZRANGE', KEYS[3], 0, n - #ids - 1)
  zrem_all(KEYS[3], due)
  for _, id in ipairs(due) do ids[#ids + 1] = id end
end
discard(ids)
local more = (#ids == n or next_cursor ~= '') and 1 or 0
if #ids > 0 then
  bump(KEYS[4], 'drained', #ids)
  emit(KEYS[5], maxlen, 'type', 'drained', 'ids', table.concat(ids, ','))
end
record(KEYS[2], #ids .. ':' .. more .. ':' .. next_cursor, replay_ttl)
return { #ids, more, next_cursor }
`,
);
