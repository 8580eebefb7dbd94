/**
 * Lua helpers shared by the job-control scripts (drain, clean, obliterate, retry all): which
 * pending jobs are oldest across every lane and level, how a job leaves pending, how its row
 * goes, and the id below which every job is older than an instant. Put at the top of a body,
 * after PENDING_SETS_LUA (whose pending_sets and newer they use); the prelude's helpers they
 * name are then included by luaScript.
 */
import { NODE_BITS, SEQUENCE_BITS, SNOWFLAKE_EPOCH_MS } from '../../ids/snowflake';
import { BASE62_ALPHABET, BASE62_WIDTH } from '../../ids/base62';

/** Most jobs one job-control call moves or deletes (the chunk the TypeScript loops go by). */
export const CONTROL_CHUNK_MAX = 500;

export const CONTROL_LUA = `
local ID_EPOCH_MS = ${SNOWFLAKE_EPOCH_MS}
local ID_LOW_BITS = ${2 ** (NODE_BITS + SEQUENCE_BITS)}
local B62 = '${BASE62_ALPHABET}'

-- ARGV[i] as a job id (JOB and 11 Base62 characters): ids become parts of row keys.
local function id_arg(i)
  local id = ARGV[i]
  if not id or #id ~= ${3 + BASE62_WIDTH} or not string.find(id, '^JOB[0-9A-Za-z]+$') then
    refuse('ARGV[' .. i .. '] must be a job id')
  end
  return id
end

-- The smallest id minted at unix ms t (node 0, sequence 0): every id minted before t sorts
-- below it, byte by byte. nil before the id epoch (no id is older). The Snowflake is
-- t' * 2^22, past a double's exact range, so it is built in base 62 digit by digit: t' in
-- base 62 (exact: t' < 2^42), then times 2^22 with a carry (each step stays below 2^53).
local function id_floor(t)
  local v = t - ID_EPOCH_MS
  if v < 0 then return nil end
  local digits = {}
  while v > 0 do
    local d = v % 62
    digits[#digits + 1] = d
    v = (v - d) / 62
  end
  local carry = 0
  for i = 1, #digits do
    local x = digits[i] * ID_LOW_BITS + carry
    digits[i] = x % 62
    carry = (x - digits[i]) / 62
  end
  while carry > 0 do
    local d = carry % 62
    digits[#digits + 1] = d
    carry = (carry - d) / 62
  end
  local out = {}
  for i = ${BASE62_WIDTH}, 1, -1 do
    local d = digits[i] or 0
    out[#out + 1] = string.sub(B62, d + 1, d + 1)
  end
  return 'JOB' .. table.concat(out)
end

-- Up to n pending ids, oldest first (mint order) across every pending set of every lane and
-- level, each below the id 'below' (nil: any). A k-way merge: one ZRANGE per set to start,
-- then a refill only of the set whose run was used up (twice as many each time, never more
-- than still wanted), so O(sets + n) calls. Returns the ids taken, in order, and per set
-- { key, lane, level, ids } for unpend().
local function oldest_pending(n, below)
  local upper = below and '(' .. below or '+'
  local function range(key, from, count)
    return redis.call('ZRANGE', key, from, upper, 'BYLEX', 'LIMIT', 0, count)
  end
  local sets = pending_sets(nil)
  local heap = {}
  local function first(i, j)
    return newer(heap[j].ids[heap[j].at], heap[i].ids[heap[i].at])
  end
  local function sift_up(i)
    while i > 1 and first(i, math.floor(i / 2)) do
      local p = math.floor(i / 2)
      heap[i], heap[p] = heap[p], heap[i]
      i = p
    end
  end
  local function sift_down(i)
    while true do
      local top, l, r = i, 2 * i, 2 * i + 1
      if l <= #heap and first(l, top) then top = l end
      if r <= #heap and first(r, top) then top = r end
      if top == i then return end
      heap[i], heap[top] = heap[top], heap[i]
      i = top
    end
  end
  local start = math.max(1, math.floor(n / math.max(1, #sets)))
  for _, set in ipairs(sets) do
    local ids = range(set.key, '-', start)
    if #ids > 0 then
      heap[#heap + 1] = { set = set, ids = ids, at = 1, asked = start, taken = {} }
      sift_up(#heap)
    end
  end
  local out, groups = {}, {}
  while #out < n and #heap > 0 do
    local run = heap[1]
    local id = run.ids[run.at]
    out[#out + 1] = id
    if #run.taken == 0 then groups[#groups + 1] = run end
    run.taken[#run.taken + 1] = id
    run.at = run.at + 1
    if run.at > #run.ids and #run.ids == run.asked and #out < n then
      run.asked = math.min(2 * run.asked, n - #out)
      run.ids, run.at = range(run.set.key, '(' .. id, run.asked), 1
    end
    if run.at > #run.ids then
      heap[1] = heap[#heap]
      heap[#heap] = nil
    end
    if #heap > 0 then sift_down(1) end
  end
  local by_set = {}
  for _, run in ipairs(groups) do
    by_set[#by_set + 1] = { key = run.set.key, lane = run.set.lane, level = run.set.level, ids = run.taken }
  end
  return out, by_set
end

-- Up to n pending ids in no particular order across lanes (set by set, each in mint order):
-- for drain and obliterate, which take everything anyway and need no merge. Same returns as
-- oldest_pending.
local function some_pending(n)
  local out, by_set = {}, {}
  for _, set in ipairs(pending_sets(nil)) do
    if #out >= n then break end
    local ids = redis.call('ZRANGE', set.key, 0, n - #out - 1)
    if #ids > 0 then
      by_set[#by_set + 1] = { key = set.key, lane = set.lane, level = set.level, ids = ids }
      for _, id in ipairs(ids) do out[#out + 1] = id end
    end
  end
  return out, by_set
end

-- Takes the ids oldest_pending or some_pending chose out of their sets; a lane left without work at a level
-- leaves ready (or its held digit) there, so the flow invariant holds after every call.
local function unpend(by_set)
  for _, group in ipairs(by_set) do
    zrem_all(group.key, group.ids)
    drained(group.lane, group.level)
  end
end

-- Deletes the rows of jobs already taken out of their sets (a job's log lines are fields of
-- its row and go with it), and each job's idempotency key while it still names the job, as
-- remove does: a later enqueue with the key then creates a new job.
local function discard(ids)
  local idem = BASE .. 'idem:'
  local rows = {}
  for _, id in ipairs(ids) do
    local row = ROW_PREFIX .. id
    local k = redis.call('HGET', row, 'k')
    if k and redis.call('GET', idem .. k) == id then redis.call('DEL', idem .. k) end
    rows[#rows + 1] = row
  end
  del_all(rows)
end
`;
