import { luaScript } from './prelude';

/** A read, not a transition: one script so the state and the row are seen at one instant. */
export const JOB_VIEW_LUA = luaScript(
  `
-- job view (read only): which set holds the id, its score there, and the row. Pending is
-- the job's own lane's pending set at its level (row 'l', 'y').
-- KEYS[1] fence   KEYS[2] pending (the default lane's at level 0; other lanes' pending sets
-- are composed from the base)   KEYS[3] active   KEYS[4] schedule   KEYS[5] dead
-- KEYS[6] row
-- ARGV[1] id
-- Returns: { state, score ('' when none), row fields as a flat field/value list, with a
--          chunked payload reassembled into 'd' (chunks split bytes, not characters, so
--          they must be joined before anything decodes them); the job's log lines ('gn',
--          'g:<n>': see job-log.lua.ts) come with the row, so a job without a log costs nothing more }
--          state is pending | active | schedule | dead | completed (a row in no set that
--          says it finished: it has a finished-at) | unknown (no row; or a row in no set that
--          never finished, which breaks invariant 2 and is reported as 'orphan')
`,
  `
local id = ARGV[1]
local ROW = KEYS[6]
local states = { 'pending', 'active', 'schedule', 'dead' }
local raw = redis.call('HGETALL', ROW)
local row = raw
if redis.call('HEXISTS', ROW, 'd2') == 1 then
  row = { 'd', get_data(ROW, redis.call('HMGET', ROW, 'd', 'd2', 'd3', 'd4', 'dn')) }
  for i = 1, #raw, 2 do
    local name = raw[i]
    if not (name == 'dn' or string.match(name, '^d%d+$')) and name ~= 'd' then
      row[#row + 1] = name
      row[#row + 1] = raw[i + 1]
    end
  end
end
local lane, level = place(unpack(redis.call('HMGET', ROW, 'l', 'y')))
local sets = { pending_key(level, lane), KEYS[3], KEYS[4], KEYS[5] }
for i = 1, 4 do
  local score = redis.call('ZSCORE', sets[i], id)
  if score then
    return { states[i], score, row }
  end
end
if #row > 0 then
  if redis.call('HEXISTS', ROW, 'f') == 1 then
    return { 'completed', '', row }
  end
  return { 'orphan', '', row }
end
return { 'unknown', '', row }
`,
);
