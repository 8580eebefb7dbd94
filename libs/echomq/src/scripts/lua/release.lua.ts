import { luaScript } from './prelude';

export const RELEASE_LUA = luaScript(
  `
-- release: active -> pending without spending the retry budget (graceful shutdown
-- hands back claimed work). attempts still only grows; the budget base moves up by one
-- so the released claim does not count against the job. Each job goes back into its own
-- lane's pending at its level (row 'l', 'y') and is counted out of its lane's active jobs.
-- A crash suspect ('x', see reap) stays one: a released claim proves nothing about the job.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] active   KEYS[4] pending (the
-- default lane's at level 0; other lanes' pending sets are composed from the base)
-- KEYS[5] metrics   KEYS[6] events   KEYS[7] wake
-- ARGV[1] row prefix emq:{q}:job:   ARGV[2] events max length   ARGV[3] replay window ms
-- ARGV[4] claim count N   ARGV[5..] N groups of 3: id, token (attempts), claimant
-- Returns: per claim 1 (released) or 0 (stale: changed nothing); a repeated request returns
--          its first reply.
-- Event:   'released' with the ids released.
`,
  `
local prefix = ARGV[1]
local maxlen = int_arg(2, 1, 1000000000)
local replay_ttl = int_arg(3, 1, 1000000000000)
local n = batch_arg(4, 5, 3)

local prior = replayed(KEYS[2])
if prior then
  return flags_from(prior, {})
end

-- First write: a full Redis still gives claimed jobs back at shutdown.
runs_when_full()
local out, ids = {}, {}
local gone = leaving()
local stale = 0
for i = 0, n - 1 do
  local base = 5 + i * 3
  local id = ARGV[base]
  local row = prefix .. id
  local held, lane = holds(row, ARGV[base + 1], ARGV[base + 2])
  if held then
    redis.call('ZREM', KEYS[3], id)
    gone.add(place(lane))
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
  gone.settle(KEYS[7])
  pend_by_row(ids)
  redis.call('HINCRBY', KEYS[5], 'released', #ids)
  emit(KEYS[6], maxlen, 'type', 'released', 'ids', table.concat(ids, ','))
  wake(KEYS[7])
end
bump(KEYS[5], 'stale', stale)
record(KEYS[2], table.concat(out), replay_ttl)
return out
`,
);
