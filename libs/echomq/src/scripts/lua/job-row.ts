/**
 * The Lua helper every script that creates a job uses for the job's own settings on its row
 * (enqueue, enqueue-keyed, a schedule's occurrence), so the three write the same fields the
 * same way. Included by luaScript after the flow helpers, whose DEFAULT_LANE it reads.
 */
export const JOB_ROW_PRELUDE = `
-- A new job's own settings, appended to an HSET list: only those it was given ('' is absent)
-- go on its row, since without them the serving worker's apply at claim; the default lane and
-- priority level 0 are left out too. One call per job and no closures: enqueue runs it for
-- every job of a batch.
local function put_own(fields, name, max, backoff, lane, level, timeout)
  local n = #fields
  if name ~= '' then fields[n + 1], fields[n + 2], n = 'n', name, n + 2 end
  if max ~= '' then fields[n + 1], fields[n + 2], n = 'm', tonumber(max), n + 2 end
  if backoff ~= '' then fields[n + 1], fields[n + 2], n = 'o', backoff, n + 2 end
  if lane ~= DEFAULT_LANE then fields[n + 1], fields[n + 2], n = 'l', lane, n + 2 end
  if level ~= 0 then fields[n + 1], fields[n + 2], n = 'y', level, n + 2 end
  if timeout ~= '' then fields[n + 1], fields[n + 2] = 't', tonumber(timeout) end
end
`;
