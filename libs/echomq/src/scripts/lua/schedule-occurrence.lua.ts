/**
 * Lua shared by the schedule scripts (put before each body, so luaScript keeps the prelude
 * helpers it calls): reading a stored definition, telling where an occurrence is, and writing
 * an occurrence from a definition.
 *
 * An occurrence is an ordinary job in the schedule set at its run-at. Its row is the
 * template's fields as enqueue writes them (d.., n, m, o, l, y, t) plus
 *   sk  the schedule key it belongs to (the claim returns it, so the worker can advance)
 *   sa  its planned run-at (ms), from which the next run-at is computed once it was claimed
 *   tc  the trace context of the upsert that created it, or of the occurrence it advanced
 *       from (so every occurrence carries its upsert's), when there is one
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

-- Where an occurrence is, as the schedule scripts tell it apart, with its row's planned
-- run-at ('sa') and, while it waits, its run-at (the score):
--   'waiting'  in the schedule set, never claimed (one there with attempts waits out a retry
--              backoff: it ran)
--   'pending'  promoted (or given back) and not claimed yet: in its lane's pending set
--   'ran'      claimed at least once and still has a row: active, retrying, dead, retained
--   'gone'     no row
local function occurrence_at(row_prefix, schedule, id)
  local score = redis.call('ZSCORE', schedule, id)
  local f = redis.call('HMGET', row_prefix .. id, 'a', 'sa', 'l', 'y')
  if score and (tonumber(f[1]) or 0) == 0 then return 'waiting', f[2], tonumber(score) end
  if redis.call('EXISTS', row_prefix .. id) == 0 then return 'gone' end
  if not score then
    local lane, level = place(f[3], f[4])
    if redis.call('ZSCORE', pending_key(level, lane), id) then return 'pending', f[2] end
  end
  return 'ran', f[2]
end

-- Whether two definitions have the same timing (cron and tz, or everyMs); a stored text that
-- does not parse has none in common with anything.
local function same_spec(stored_text, def)
  local ok, stored = pcall(cjson.decode, stored_text)
  if not ok or type(stored) ~= 'table' or type(stored.spec) ~= 'table' or type(def.spec) ~= 'table' then
    return false
  end
  local a, b = stored.spec, def.spec
  return a.cron == b.cron and a.tz == b.tz and a.everyMs == b.everyMs
end

-- Writes the occurrence's row and puts it in the schedule set at run_at (a run-at already
-- past is promoted by the next claim or reaper pass). planned ('sa') is run_at unless given;
-- trace ('tc') is left out when nil, false or ''.
local function write_occurrence(row_prefix, schedule, id, def, key, run_at, planned, trace)
  local t = def.template
  local fields = {}
  put_data(fields, t.data)
  -- The template's absent settings are nil or JSON null; put_own takes '' for absent.
  local function given(value, absent)
    if value == nil or value == cjson.null then return absent end
    return value
  end
  put_own(fields, given(t.name, ''), given(t.maxAttempts, ''), given(t.backoff, ''),
    given(t.lane, DEFAULT_LANE), given(t.priority, 0), given(t.timeoutMs, ''))
  fields[#fields + 1] = 'sk'
  fields[#fields + 1] = key
  fields[#fields + 1] = 'sa'
  fields[#fields + 1] = planned or run_at
  if trace and trace ~= '' then
    fields[#fields + 1] = 'tc'
    fields[#fields + 1] = trace
  end
  redis.call('HSET', row_prefix .. id, unpack(fields))
  redis.call('ZADD', schedule, run_at, id)
end
`;
