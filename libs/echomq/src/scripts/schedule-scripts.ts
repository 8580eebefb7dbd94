/** The scripts of one area, spread into SCRIPTS (registry.ts): { emqName: { lua, keys } }. */
export const SCHEDULE_SCRIPTS = {} as const;
