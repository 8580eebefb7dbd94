/**
 * Lua shared by the schedule scripts (put before each body, so luaScript keeps the prelude
 * helpers it calls): reading a stored definition and writing an occurrence from it.
 *
 * An occurrence is an ordinary job in the schedule set at its run-at. Its row is the
 * template's fields as enqueue writes them (d.., n, m, o, l, y, t) plus
 *   sk  the schedule key it belongs to (the claim returns it, so the worker can advance)
 *   sa  its planned run-at (ms), from which the next run-at is computed once it left the set
 */
export const SCHEDULE_OCCURRENCE_LUA = `
-- A stored definition (canonical JSON written by the library); refused when it does not
-- parse, before anything is written.
local function decode_definition(text, what)
  local ok, def = pcall(cjson.decode, text)
  if not ok or type(def) ~= 'table' or type(def.template) ~= 'table' or type(def.template.data) ~= 'string' then
    refuse(what .. ' is not a schedule definition')
  end
  return def
end

-- Writes the occurrence's row and puts it in the schedule set at run_at (a run-at already
-- past is promoted by the next claim or reaper pass).
local function write_occurrence(row_prefix, schedule, id, def, key, run_at)
  local t = def.template
  local fields = {}
  put_data(fields, t.data)
  local function add(field, value)
    if value ~= nil and value ~= cjson.null then
      fields[#fields + 1] = field
      fields[#fields + 1] = value
    end
  end
  if t.name ~= '' then add('n', t.name) end
  add('m', t.maxAttempts)
  add('o', t.backoff)
  if t.lane ~= DEFAULT_LANE then add('l', t.lane) end
  if t.priority ~= 0 then add('y', t.priority) end
  add('t', t.timeoutMs)
  add('sk', key)
  add('sa', run_at)
  redis.call('HSET', row_prefix .. id, unpack(fields))
  redis.call('ZADD', schedule, run_at, id)
end
`;
