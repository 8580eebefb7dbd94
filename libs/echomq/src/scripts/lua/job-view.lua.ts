import { luaScript } from './prelude';

/** A read, not a transition: one script so the state and the row are seen at one instant. */
export const JOB_VIEW_LUA = luaScript(
  `
-- job view (read only): which set holds the id, its score there, and the row.
-- KEYS[1] pending   KEYS[2] active   KEYS[3] schedule   KEYS[4] dead   KEYS[5] row
-- ARGV[1] id
-- Returns: { state, score ('' when none), row fields as a flat field/value list }
--          state is pending | active | schedule | dead | completed (row in no set) | unknown
`,
  `
local id = ARGV[1]
local states = { 'pending', 'active', 'schedule', 'dead' }
local row = redis.call('HGETALL', KEYS[5])
for i = 1, 4 do
  local score = redis.call('ZSCORE', KEYS[i], id)
  if score then
    return { states[i], score, row }
  end
end
if #row > 0 then
  return { 'completed', '', row }
end
return { 'unknown', '', row }
`,
);
