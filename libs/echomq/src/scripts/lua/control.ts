/**
 * Lua helpers shared by the job-control scripts (drain, clean, obliterate, retry all): taking
 * pending jobs set by set along a bounded walk (PENDING_WALK_LUA), and how a job's row goes.
 * Put at the top of a body, after PENDING_SETS_LUA and PENDING_WALK_LUA (whose helpers they
 * use); the prelude's helpers they name are then included by luaScript.
 */
import { BASE62_WIDTH } from '../../ids/base62';

/** Most jobs one job-control call moves or deletes (the chunk the TypeScript loops go by). */
export const CONTROL_CHUNK_MAX = 500;

export const CONTROL_LUA = `
-- ARGV[i] as a job id (JOB and 11 Base62 characters): ids become parts of row keys.
local function id_arg(i)
  local id = ARGV[i]
  if not id or #id ~= ${3 + BASE62_WIDTH} or not string.find(id, '^JOB[0-9A-Za-z]+$') then
    refuse('ARGV[' .. i .. '] must be a job id')
  end
  return id
end

-- Up to n pending ids along the walk from cursor, each below the id 'below' (nil: any):
-- set by set in walk order, each set's own ids oldest first (mint order). Each set taken from
-- leaves ready / held once empty (drained), so the flow invariant holds after every call.
-- after_held as walk_pending's. Returns the ids taken, in order, and the cursor to go on at.
local function take_pending(cursor, sets_max, n, below, after_held)
  local upper = below and '(' .. below or '+'
  local out = {}
  local function visit(level, lane, key)
    local want = n - #out
    if want <= 0 then return false end
    local ids = redis.call('ZRANGE', key, '-', upper, 'BYLEX', 'LIMIT', 0, want)
    zrem_all(key, ids)
    -- (also when nothing was taken: an index entry of an empty set is dropped, not walked again)
    drained(lane, level)
    for _, id in ipairs(ids) do out[#out + 1] = id end
    return #ids < want
  end
  local next_cursor = walk_pending(cursor, sets_max, visit, after_held)
  return out, next_cursor
end

-- Deletes the rows of jobs already taken out of their sets (a job's log lines are fields of
-- its row and go with it), and each job's idempotency key while it still names the job, as
-- remove does: a later enqueue with the key then creates a new job. UNLINK: a row can hold a
-- chunked payload and a hundred log lines, freed off the script's time.
local function discard(ids)
  local idem = BASE .. 'idem:'
  local rows = {}
  for _, id in ipairs(ids) do
    local row = ROW_PREFIX .. id
    local k = redis.call('HGET', row, 'k')
    if k and redis.call('GET', idem .. k) == id then redis.call('DEL', idem .. k) end
    rows[#rows + 1] = row
  end
  each_slice(rows, function(from, to) redis.call('UNLINK', unpack(rows, from, to)) end)
end
`;
