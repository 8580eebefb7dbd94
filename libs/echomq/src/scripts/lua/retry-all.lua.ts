import { CONTROL_CHUNK_MAX } from './control';
import { luaScript } from './prelude';

export const RETRY_ALL_LUA = luaScript(
  `
-- retry all: dead -> pending with a fresh retry budget, oldest first, one chunk per call;
-- each job as retry does it: attempts is not reset (it is the fencing token), the budget base
-- moves up to it, and the job goes into its own lane's pending at its level (row 'l', 'y').
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] dead   KEYS[4] metrics
-- KEYS[5] events   KEYS[6] wake
-- ARGV[1] most jobs this call, 1 .. ${CONTROL_CHUNK_MAX}   ARGV[2] events max length   ARGV[3] replay window ms
-- Returns: { jobs retried by this call, 1 when dead still holds jobs else 0 }; a repeated
--          request returns its first reply.
-- Event:   'retried' with the ids retried (none when there were none).
`,
  `
local n = int_arg(1, 1, ${CONTROL_CHUNK_MAX})
local maxlen = int_arg(2, 1, 1000000000)
local replay_ttl = int_arg(3, 1, 1000000000000)
local prior = replayed(KEYS[2])
if prior then
  local retried, more = string.match(prior, '^(%d+):(%d)$')
  return { tonumber(retried), tonumber(more) }
end
local ids = redis.call('ZRANGE', KEYS[3], 0, n - 1)
if #ids > 0 then
  zrem_all(KEYS[3], ids)
  for _, id in ipairs(ids) do
    local row = ROW_PREFIX .. id
    redis.call('HSET', row, 'b', redis.call('HGET', row, 'a') or '0')
  end
  pend_by_row(ids)
  bump(KEYS[4], 'retried', #ids)
  emit(KEYS[5], maxlen, 'type', 'retried', 'ids', table.concat(ids, ','))
  wake(KEYS[6])
end
local more = redis.call('EXISTS', KEYS[3])
record(KEYS[2], #ids .. ':' .. more, replay_ttl)
return { #ids, more }
`,
);
