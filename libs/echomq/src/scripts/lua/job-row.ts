/**
 * The Lua helpers every script that creates a job uses for the job's own settings on its row
 * (enqueue, enqueue-keyed, a schedule's occurrence), so the three check and write the same
 * fields the same way. Included by luaScript after the flow helpers, whose DEFAULT_LANE it reads.
 */
export const JOB_ROW_PRELUDE = `
-- A stored backoff (ARGV[i]) is read back by workers of any version: only a small object
-- naming a policy a row can hold (fixed or exponential; a function cannot be stored).
local function check_backoff(i)
  local text = ARGV[i]
  local ok, policy = false, nil
  if #text <= 256 then ok, policy = pcall(cjson.decode, text) end
  if not ok or type(policy) ~= 'table' or (policy.type ~= 'fixed' and policy.type ~= 'exponential') then
    refuse('ARGV[' .. i .. '] must be a fixed or exponential backoff policy as JSON (at most 256 bytes)')
  end
end

-- A job's lane as given (ARGV[i], not ''): the names keyspace/lane-name.ts allows.
local function check_lane(i)
  local lane = ARGV[i]
  if #lane > 64 or not string.match(lane, '^[%w_.:@+=-]+$') then
    refuse('ARGV[' .. i .. '] must be a lane name (1 to 64 of A-Z a-z 0-9 _ . : @ + = -)')
  end
end

-- A new job's own settings, appended to an HSET list after fields[n] (after its last element
-- when n is not given, as put_data): only those it was given ('' is absent) go on its row,
-- since without them the serving worker's apply at claim; the default lane and priority level
-- 0 are left out too. Returns the list's new length. One call per job and no closures: enqueue
-- runs it for every job of a batch.
local function put_own(fields, name, max, backoff, lane, level, timeout, n)
  n = n or #fields
  if name ~= '' then fields[n + 1], fields[n + 2], n = 'n', name, n + 2 end
  if max ~= '' then fields[n + 1], fields[n + 2], n = 'm', tonumber(max), n + 2 end
  if backoff ~= '' then fields[n + 1], fields[n + 2], n = 'o', backoff, n + 2 end
  if lane ~= DEFAULT_LANE then fields[n + 1], fields[n + 2], n = 'l', lane, n + 2 end
  if level ~= 0 then fields[n + 1], fields[n + 2], n = 'y', level, n + 2 end
  if timeout ~= '' then fields[n + 1], fields[n + 2], n = 't', tonumber(timeout), n + 2 end
  return n
end
`;
