import { CONTROL_CHUNK_MAX, CONTROL_LUA } from './control';
import { PENDING_SETS_LUA, PENDING_WALK_LUA, WALK_SETS_MAX, WALKS_MAX } from './pending-sets';
import { luaScript } from './prelude';

export const CLEAN_LUA = luaScript(
  `
-- clean: jobs of one state whose age since enqueue (their id's time) exceeds a bound on the
-- server clock -> gone, one chunk per call. pending: lane by lane along the walk (at most
-- ${WALK_SETS_MAX} sets a call, each set's old jobs oldest first: the limit applies in lane order,
-- not globally oldest first); dead: oldest first. schedule is ordered by run-at, not by id,
-- so the caller names the candidates (oldest first) and each is checked here: still
-- scheduled, still old enough. Rows and their idempotency keys go (see discard); a lane left
-- without work leaves ready / held.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] schedule   KEYS[4] dead
-- KEYS[5] metrics   KEYS[6] events   (pending sets from the base, found through ready / held)
-- ARGV[1] state: pending | schedule | dead   ARGV[2] older than this many ms (0 .. 10^13)
-- ARGV[3] most jobs this call, 1 .. ${CONTROL_CHUNK_MAX}   ARGV[4] events max length   ARGV[5] replay window ms
-- ARGV[6] pending only: the walk's cursor (p for the first call, then the one the last call
--         returned); '' for dead and schedule
-- ARGV[7 ..] schedule only: candidate ids (at most ARGV[3])
-- Returns: { the cursor for the next call ('' once the walk is done; always '' for dead and
--          schedule), the ids removed... }; a repeated request returns the same reply. A walk
--          that ends having removed jobs, or with held's size changed (a lane left held behind
--          the cursor), begins another, up to ${WALKS_MAX} walks (walk_next).
-- Event:   'cleaned' with the ids removed and state (none when there were none).
`,
  `${PENDING_SETS_LUA}${PENDING_WALK_LUA}${CONTROL_LUA}
local state = ARGV[1]
if state ~= 'pending' and state ~= 'schedule' and state ~= 'dead' then
  refuse('ARGV[1] must be pending, schedule or dead')
end
local older_than = int_arg(2, 0, 10000000000000)
local n = int_arg(3, 1, ${CONTROL_CHUNK_MAX})
local maxlen = int_arg(4, 1, 1000000000)
local replay_ttl = int_arg(5, 1, 1000000000000)
local cursor = walk_cursor_arg(6)
if state ~= 'pending' and cursor.phase ~= '' then refuse('a walk cursor is for pending only') end
local candidates = {}
if state == 'schedule' then
  if #ARGV - 6 > n then refuse('at most ARGV[3] candidate ids') end
  for i = 7, #ARGV do candidates[#candidates + 1] = id_arg(i) end
elseif #ARGV ~= 6 then
  refuse('candidate ids are for schedule only')
end
local function reply(next_cursor, ids)
  local out = { next_cursor }
  for _, id in ipairs(ids) do out[#out + 1] = id end
  return out
end
local prior = replayed(KEYS[2])
if prior then
  -- (a cursor may name a lane, which may hold '|'; ids do not)
  local next_cursor, text = string.match(prior, '^(.*)|([^|]*)$')
  local ids = {}
  for id in string.gmatch(text, '[^,]+') do ids[#ids + 1] = id end
  return reply(next_cursor, ids)
end
-- Cleaning frees room, so a full Redis must let it run; also a call that finds nothing, whose
-- reply record is then its first write (the last chunk of a clean, or one with nothing to take).
runs_when_full()
-- Every id minted before this instant sorts below floor (byte order is mint order).
local floor = first_id_at(now_ms() - older_than)
local ids, next_cursor = {}, ''
if state == 'pending' then
  local position
  ids, position = take_pending(cursor, ${WALK_SETS_MAX}, n, floor, nil)
  next_cursor = walk_next(cursor, position, #ids > 0, false)
elseif state == 'dead' then
  ids = redis.call('ZRANGE', KEYS[4], '-', '(' .. floor, 'BYLEX', 'LIMIT', 0, n)
  zrem_all(KEYS[4], ids)
else
  for _, id in ipairs(candidates) do
    -- (newer compares bytes: Lua's own < follows the server's collation locale)
    if newer(floor, id) and redis.call('ZREM', KEYS[3], id) == 1 then ids[#ids + 1] = id end
  end
end
discard(ids)
local text = table.concat(ids, ',')
if #ids > 0 then
  bump(KEYS[5], 'cleaned', #ids)
  emit(KEYS[6], maxlen, 'type', 'cleaned', 'ids', text, 'state', state)
end
record(KEYS[2], next_cursor .. '|' .. text, replay_ttl)
return reply(next_cursor, ids)
`,
);
