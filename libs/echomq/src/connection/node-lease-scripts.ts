/** The node lease's three commands: small scripts, each one atomic step on one key. */

/** Takes the node if free. Replies [1 if taken, server ms] (the time is what the new window is built on). */
export const ACQUIRE_LUA = `
local taken = redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX')
local t = redis.call('TIME')
return {taken and 1 or 0, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)}`;
/** Compare-and-expire. Replies [1 if still ours, server ms]; 0 means gone or someone else's: lost. */
export const RENEW_LUA = `
local held = redis.call('GET', KEYS[1]) == ARGV[1]
if held then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
local t = redis.call('TIME')
return {held and 1 or 0, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)}`;
/** Compare-and-delete: never deletes a lease another process has taken since. */
export const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;
