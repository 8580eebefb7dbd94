import { CLEAN_LUA } from './lua/clean.lua';
import { DRAIN_LUA } from './lua/drain.lua';
import { OBLITERATE_LUA } from './lua/obliterate.lua';
import { PROMOTE_JOB_LUA } from './lua/promote-job.lua';
import { RETRY_ALL_LUA } from './lua/retry-all.lua';
import { UPDATE_JOB_LUA } from './lua/update-job.lua';

/** The scripts of one area, spread into SCRIPTS (registry.ts): { emqName: { lua, keys } }. */
export const CONTROL_SCRIPTS = {
  emqDrain: { lua: DRAIN_LUA, keys: 5 },
  emqClean: { lua: CLEAN_LUA, keys: 6 },
  emqObliterate: { lua: OBLITERATE_LUA, keys: 9 },
  emqRetryAll: { lua: RETRY_ALL_LUA, keys: 6 },
  emqPromoteJob: { lua: PROMOTE_JOB_LUA, keys: 7 },
  emqUpdateJob: { lua: UPDATE_JOB_LUA, keys: 9 },
} as const;
