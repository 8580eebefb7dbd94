import { ENQUEUE_KEYED_LUA } from './lua/enqueue-keyed.lua';

/** The scripts of one area, spread into SCRIPTS (registry.ts): { emqName: { lua, keys } }. */
export const DEDUPE_SCRIPTS = {
  emqEnqueueKeyed: { lua: ENQUEUE_KEYED_LUA, keys: 7 },
} as const;
