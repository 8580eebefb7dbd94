import { JOB_LOG_LUA } from './lua/job-log.lua';

/** The scripts of one area, spread into SCRIPTS (registry.ts): { emqName: { lua, keys } }. */
export const JOB_LOG_SCRIPTS = {
  emqJobLog: { lua: JOB_LOG_LUA, keys: 3 },
} as const;
