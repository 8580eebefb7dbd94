import { luaScript } from './prelude';

/** A read, not a transition: what the reaper needs to know to sleep until it has work. */
export const DEADLINES_LUA = luaScript(
  `
-- deadlines (read only): when this queue next needs a reaper, at one instant.
-- KEYS[1] active   KEYS[2] schedule   KEYS[3] schedulers   KEYS[4] format
-- Returns: { server now (ms), the earliest lease deadline (ms; -1 when active is empty),
--            the earliest run-at in schedule (ms; -1 when it is empty),
--            1 when the queue has schedules (their sweep is due at every look) else 0,
--            the queue's recorded data format ('' when none is recorded) }
`,
  `
local a = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local s = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
return {
  now_ms(),
  tonumber(a[2]) or -1,
  tonumber(s[2]) or -1,
  redis.call('EXISTS', KEYS[3]),
  redis.call('GET', KEYS[4]) or '',
}
`,
);
