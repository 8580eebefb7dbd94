import { REPAIR_DUPLICATES_LUA } from './lua/repair-duplicates.lua';
import { REPAIR_LANE_ACTIVE_LUA } from './lua/repair-lane-active.lua';
import { REPAIR_LANE_INDEX_LUA } from './lua/repair-lane-index.lua';
import { REPAIR_LANE_LISTS_LUA } from './lua/repair-lane-lists.lua';
import { REPAIR_LEASES_LUA } from './lua/repair-leases.lua';
import { REPAIR_MISSING_ROWS_LUA } from './lua/repair-missing-rows.lua';
import { REPAIR_ORPHANS_LUA } from './lua/repair-orphans.lua';

/**
 * The doctor's scripts (doctor/), spread into SCRIPTS (registry.ts): each checks one kind of
 * broken invariant at one instant and, asked to, mends it in the same call, appending a
 * 'repaired' event for what it mended.
 */
export const REPAIR_SCRIPTS = {
  emqRepairMissingRows: { lua: REPAIR_MISSING_ROWS_LUA, keys: 4 },
  emqRepairDuplicates: { lua: REPAIR_DUPLICATES_LUA, keys: 7 },
  emqRepairOrphans: { lua: REPAIR_ORPHANS_LUA, keys: 7 },
  emqRepairLeases: { lua: REPAIR_LEASES_LUA, keys: 4 },
  emqRepairLaneIndex: { lua: REPAIR_LANE_INDEX_LUA, keys: 4 },
  emqRepairLaneActive: { lua: REPAIR_LANE_ACTIVE_LUA, keys: 5 },
  emqRepairLaneLists: { lua: REPAIR_LANE_LISTS_LUA, keys: 3 },
} as const;
