import { luaScript } from './prelude';

/** The longest hold a throttle may ask for: one day, the longest rate window. */
export const THROTTLE_HOLD_MAX_MS = 86_400_000;

export const THROTTLE_LUA = luaScript(
  `
-- throttle: active -> pending, when a service the handler called limited it (RateLimitedError).
-- Like release, the attempt is not spent (the budget base moves up by one); the job goes back
-- into its own lane's pending at its level (row 'l', 'y') and is counted out of its lane's
-- active jobs. Then what was limited is held back for every worker: scope 'queue' holds the
-- queue (the hold key, kept for the longer of this hold and one already there); scope 'lane'
-- holds the job's lane (lane-holds: the later of now + ms and a hold already set; the lane
-- leaves ready until the hold is due, see lanes_due). Either way an idle worker is woken: the
-- job is back in pending, and the claim it makes reads the hold and sleeps exactly until it
-- ends (without the wake it would wait out its idle bound). The handler returned, so the job
-- did not crash its worker: its crash-suspect mark ('x', see reap) goes.
-- KEYS[1] fence   KEYS[2] reply key of this request   KEYS[3] active   KEYS[4] metrics
-- KEYS[5] events   KEYS[6] wake   KEYS[7] row emq:{q}:job:<id>
-- ARGV[1] id   ARGV[2] token (attempts)   ARGV[3] claimant   ARGV[4] hold ms (1..${THROTTLE_HOLD_MAX_MS})
-- ARGV[5] scope: queue | lane   ARGV[6] events max length   ARGV[7] replay window ms
-- Returns: 1; a repeated request returns its first reply (a refusal too).
-- Errors:  EMQ_STALE when the claim no longer holds the job (as for fail; counted as stale).
-- Event:   'throttled' with the id, the attempt, ms (the hold) and scope.
`,
  `
local id, token, claimant = ARGV[1], ARGV[2], ARGV[3]
local hold_ms = int_arg(4, 1, ${THROTTLE_HOLD_MAX_MS})
local scope = ARGV[5]
if scope ~= 'queue' and scope ~= 'lane' then refuse('ARGV[5] must be queue or lane') end
local maxlen = int_arg(6, 1, 1000000000)
local replay_ttl = int_arg(7, 1, 1000000000000)
local row = KEYS[7]

local prior = replayed(KEYS[2])
if prior then
  if prior == 'stale' then return redis.error_reply('EMQ_STALE') end
  return 1
end
local held, l, y = holds(row, token, claimant)
if not held then
  redis.call('HINCRBY', KEYS[4], 'stale', 1)
  record(KEYS[2], 'stale', replay_ttl)
  return redis.error_reply('EMQ_STALE')
end

local lane, level = place(l, y)
-- The mark first, while the job is still in active: a first mark counts the default lane's
-- active jobs from the active set, and this job is counted out of its lane below.
flow_in_use()
redis.call('ZREM', KEYS[3], id)
redis.call('HINCRBY', row, 'b', 1)
redis.call('HDEL', row, 'c', 'x')
-- The hold first, so the lane's return below (its cap freed) does not outrun it.
if scope == 'queue' then
  if redis.call('PTTL', K_HOLD) < hold_ms then redis.call('SET', K_HOLD, '1', 'PX', hold_ms) end
else
  -- ZADD GT keeps the later of this hold and one already there (a new member is added).
  redis.call('ZADD', K_HOLDS, 'GT', now_ms() + hold_ms, lane)
  hold_lane(lane)
end
-- An idle worker blocked until an earlier instant (or its idle bound) learns of the hold's end
-- at its next claim.
wake(KEYS[6])
into_pending(lane, level, { id })
local gone = leaving()
gone.add(lane)
gone.settle(KEYS[6])
redis.call('HINCRBY', KEYS[4], 'throttled', 1)
emit(KEYS[5], maxlen, 'type', 'throttled', 'ids', id, 'attempt', token, 'ms', hold_ms, 'scope', scope)
record(KEYS[2], '1', replay_ttl)
return 1
`,
);
