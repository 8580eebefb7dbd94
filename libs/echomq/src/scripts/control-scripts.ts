/** The scripts of one area, spread into SCRIPTS (registry.ts): { emqName: { lua, keys } }. */
export const CONTROL_SCRIPTS = {} as const;
