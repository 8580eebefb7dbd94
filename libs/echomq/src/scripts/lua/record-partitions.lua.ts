/**
 * The registry write of a partitioned queue's layout. Not a job transition: it touches only
 * the partitions registry (one key, outside every queue's slot), never a queue's sets.
 */
export const RECORD_PARTITIONS_LUA = `
-- record partitions (registry): the partition count a process declared for a queue, and the
-- most partitions the queue ever had, which workers keep serving so that jobs of a partition
-- dropped by a smaller count still drain (docs/partitions.md). The fields are q and q#max
-- (keyspace partitionRegistryFields).
-- KEYS[1] the partitions registry (<p>:partitions)
-- ARGV[1] queue name (a logical name; checked by the caller)   ARGV[2] partition count (1..16)
-- A count of 1 for a queue with no entry writes nothing: 1 is what a missing entry means, and
-- recording it for every queue ever used would grow the registry with history. Over an existing
-- entry it is written (a queue whose count went back to 1).
-- Returns: the most partitions the queue ever had, this count included.
-- Errors:  EMQ_BAD_ARG for a count out of range (before anything is written).
local count = tonumber(ARGV[2])
if count == nil or count ~= math.floor(count) or count < 1 or count > 16 then
  return redis.error_reply('EMQ_BAD_ARG partition count must be an integer from 1 to 16')
end
if count == 1 and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 1
end
local most = tonumber(redis.call('HGET', KEYS[1], ARGV[1] .. '#max') or '0') or 0
if count > most then most = count end
redis.call('HSET', KEYS[1], ARGV[1], count, ARGV[1] .. '#max', most)
return most
`;
