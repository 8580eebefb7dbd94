import { EVENT_RESULT_MAX_BYTES, EVENT_RESULTS_TOTAL_MAX_BYTES, LEFT_OUT_RESULT_KEEP_MS } from '../limits';
import { luaScript } from './prelude';

export const COMPLETE_LUA = luaScript(
  `
-- complete: active -> completed, for one or many claims at once. Each row is deleted, or
-- kept for the keep time with its result and finished-at, in no set (it then reads 'completed');
-- a kept row loses its crash-suspect mark ('x', see reap): the job did not crash its worker.
-- Only claims that still hold their job (in active, same token and claimant) complete.
-- Each completed job is counted out of its lane's active jobs; a lane its cap held back
-- returns to ready, and a worker is woken when a cap had held one back (see leaving()).
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] active   KEYS[4] metrics
-- KEYS[5] events   KEYS[6] wake
-- ARGV[1] row prefix emq:{q}:job:   ARGV[2] keep ms (0 deletes the rows)
-- ARGV[3] events max length   ARGV[4] replay window ms   ARGV[5] claim count N
-- ARGV[6..] N groups of 4: id, token (attempts), claimant, result (JSON, '' for none)
-- Returns: per claim 1 (completed) or 0 (stale: nothing changed for it); a repeated request
--          returns its first reply.
-- Event:   one 'completed' entry for the call: ids (comma-separated), results (a JSON array
--          aligned with ids, null for none) and, when some results are too large to carry
--          (over ${EVENT_RESULT_MAX_BYTES} bytes, or past ${EVENT_RESULTS_TOTAL_MAX_BYTES} bytes for the entry), omitted: their ids; their entry in results is
--          null and their row is kept at least ${LEFT_OUT_RESULT_KEEP_MS} ms so waitFor can read it.
`,
  `
local prefix = ARGV[1]
local keep = int_arg(2, 0, 1000000000000)
local maxlen = int_arg(3, 1, 1000000000)
local replay_ttl = int_arg(4, 1, 1000000000000)
local n = batch_arg(5, 6, 4)

local prior = replayed(KEYS[2])
if prior then
  return flags_from(prior, {})
end

-- First write: a full Redis still completes jobs, which frees room.
runs_when_full()
local RESULT_MAX, LEFT_OUT_KEEP = ${EVENT_RESULT_MAX_BYTES}, ${LEFT_OUT_RESULT_KEEP_MS}
local budget = ${EVENT_RESULTS_TOTAL_MAX_BYTES}
local now = now_ms()
local out, ids, deleted, results, omitted, done = {}, {}, {}, {}, {}, {}
local gone = leaving()
local stale = 0
-- Lengths of ids (and results, aligned with it) and of deleted, kept as counts: # looks the
-- length up again at each append, four appends per claim.
local n_ids, n_deleted = 0, 0
for i = 0, n - 1 do
  local base = 6 + i * 4
  local id, result = ARGV[base], ARGV[base + 3]
  local row = prefix .. id
  -- done[id]: a claim presented twice in one call completes once (the id leaves active
  -- only at the end of the loop, so holds() alone would accept it again).
  -- (the lane is read here, before a row without retention is deleted)
  local held, lane = holds(row, ARGV[base + 1], ARGV[base + 2])
  if not done[id] and held then
    done[id] = true
    gone.add(place(lane))
    n_ids = n_ids + 1
    ids[n_ids] = id
    local left_out = #result > RESULT_MAX or #result > budget
    if not left_out then budget = budget - #result end
    results[n_ids] = (result == '' or left_out) and 'null' or result
    local row_keep = keep
    if left_out then
      omitted[#omitted + 1] = id
      row_keep = math.max(keep, LEFT_OUT_KEEP)
    end
    if row_keep > 0 then
      redis.call('HSET', row, 'r', result, 'f', now)
      redis.call('HDEL', row, 'c', 'x')
      redis.call('PEXPIRE', row, row_keep)
    else
      n_deleted = n_deleted + 1
      deleted[n_deleted] = row
    end
    out[i + 1] = 1
  else
    stale = stale + 1
    out[i + 1] = 0
  end
end
if n_ids > 0 then
  zrem_all(KEYS[3], ids)
  del_all(deleted)
  gone.settle(KEYS[6])
  redis.call('HINCRBY', KEYS[4], 'completed', n_ids)
  local results_json = '[' .. table.concat(results, ',') .. ']'
  if #omitted > 0 then
    emit(KEYS[5], maxlen, 'type', 'completed', 'ids', table.concat(ids, ','),
      'results', results_json, 'omitted', table.concat(omitted, ','))
  else
    emit(KEYS[5], maxlen, 'type', 'completed', 'ids', table.concat(ids, ','), 'results', results_json)
  end
end
bump(KEYS[4], 'stale', stale)
record(KEYS[2], table.concat(out), replay_ttl)
return out
`,
);
