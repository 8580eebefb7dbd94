import { ADVANCE_SCHEDULE_LUA } from './lua/advance-schedule.lua';
import { REMOVE_SCHEDULE_LUA } from './lua/remove-schedule.lua';
import { UPSERT_SCHEDULE_LUA } from './lua/upsert-schedule.lua';

/** The scripts of one area, spread into SCRIPTS (registry.ts): { emqName: { lua, keys } }. */
export const SCHEDULE_SCRIPTS = {
  emqUpsertSchedule: { lua: UPSERT_SCHEDULE_LUA, keys: 8 },
  emqAdvanceSchedule: { lua: ADVANCE_SCHEDULE_LUA, keys: 8 },
  emqRemoveSchedule: { lua: REMOVE_SCHEDULE_LUA, keys: 7 },
} as const;
