/**
 * Lua shared by the doctor's repair scripts (put at the top of a script's body, after
 * LANE_ARG_LUA when both are used): the events-length argument and the 'repaired' event. A
 * repair moves jobs between states like any transition, so it appends its event in the same
 * call (docs/model.md), and a follower of the stream (a live page, a counter fed by events)
 * sees the move instead of drifting until its next full read. A call that mends nothing
 * writes nothing, event included.
 */
export const REPAIR_EVENT_LUA = `
-- ARGV[i]: the events stream's approximate cap (XADD MAXLEN ~), as every transition takes it.
local function maxlen_arg(i)
  return int_arg(i, 1, 1000000000)
end

-- One 'repaired' event for one kind of repair in this call (docs/events.md): kind is the
-- doctor's finding kind; count how many it mended; ids the jobs, with to[i] the state ids[i]
-- is in now (pending, active, schedule, dead; gone for a member that left its set); lanes
-- the lanes for the lane kinds. Members that are no job ids are counted, not listed.
local function emit_repaired(events, maxlen, kind, count, ids, to, lanes)
  if count == 0 then return end
  emit(events, maxlen, 'type', 'repaired', 'kind', kind, 'count', count,
    'ids', table.concat(ids or {}, ','), 'to', table.concat(to or {}, ','), 'lanes', table.concat(lanes or {}, ','))
end
`;
