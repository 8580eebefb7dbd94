/** The scripts of one area, spread into SCRIPTS (registry.ts): { emqName: { lua, keys } }. */
export const JOB_LOG_SCRIPTS = {} as const;
