/** The scripts of one area, spread into SCRIPTS (registry.ts): { emqName: { lua, keys } }. */
export const DEDUPE_SCRIPTS = {} as const;
