import { DEFAULT_LANE, DEFAULT_PRIORITY, isValidLaneName, PRIORITY_MAX } from '../keyspace';
import type { ScriptContext } from '../scripts';
import { repairLaneActive } from '../scripts/repair-lane-active';
import { repairLaneIndex, type LaneLevel } from '../scripts/repair-lane-index';
import { repairLaneLists } from '../scripts/repair-lane-lists';
import type { RepairMode } from '../scripts/repair-mode';
import type { FindingLog, Unchecked } from './findings';
import { chunks, scanHash, scanSet, scanSortedSet } from './key-scan';

/** The lanes the doctor looks at, gathered while it scans (a lane name is small; jobs are not kept). */
export class LaneSightings {
  private readonly pairs = new Map<string, LaneLevel>();
  private readonly lanes = new Set<string>();
  /** Index entries that name no lane (not a lane name, or not a level): left alone, and said so. */
  strange = 0;

  constructor() {
    // The plain pending set (the default lane at level 0) is always looked at: it is named
    // even when empty, since queues written before lanes have no index entry for it.
    this.pendingSet(DEFAULT_LANE, DEFAULT_PRIORITY);
  }

  pendingSet(lane: string, level: number): void {
    this.pairs.set(`${level}:${lane}`, { lane, level });
  }

  lane(lane: string): void {
    this.lanes.add(lane);
  }

  get pendingSets(): LaneLevel[] {
    return [...this.pairs.values()];
  }

  get laneNames(): string[] {
    return [...this.lanes];
  }
}

/**
 * Every (lane, level) the claim's indexes name: members of each ready:<level> and digits of held;
 * and every lane the lane lists name. An entry that is no lane name (or no level) is counted as
 * strange: no script takes it (a lane name becomes part of keys), so it is reported as unchecked.
 */
export async function gatherIndexedLanes(
  ctx: ScriptContext,
  sightings: LaneSightings,
  batch: number,
): Promise<void> {
  const { redis, keys } = ctx;
  const isLane = (name: string): boolean => {
    if (isValidLaneName(name)) return true;
    sightings.strange++;
    return false;
  };
  for (let level = 0; level <= PRIORITY_MAX; level++) {
    for await (const lanes of scanSortedSet(redis, keys.ready(level), batch)) {
      for (const lane of lanes) if (isLane(lane)) sightings.pendingSet(lane, level);
    }
  }
  for await (const entries of scanHash(redis, keys.held, batch)) {
    for (const [lane, levels] of entries) {
      if (!isLane(lane)) continue;
      sightings.lane(lane);
      for (const digit of levels) {
        if (/^[0-9]$/.test(digit)) sightings.pendingSet(lane, Number(digit));
        else sightings.strange++;
      }
    }
  }
  for (const key of [keys.configuredLanes, keys.pausedLanes]) {
    for await (const lanes of scanSet(redis, key, batch)) {
      for (const lane of lanes) if (isLane(lane)) sightings.lane(lane);
    }
  }
}

/** Checks each (lane, level) seen against ready and held, a batch per script call. */
export async function checkLaneIndex(
  ctx: ScriptContext,
  mode: RepairMode,
  log: FindingLog,
  sightings: LaneSightings,
  batch: number,
): Promise<void> {
  for (const pairs of chunks(sightings.pendingSets, batch)) {
    for (const found of await repairLaneIndex(ctx, mode, pairs)) {
      log.add('lane-index', `${found.lane}@${found.level}`, found.problem);
    }
  }
}

/** Checks each lane seen against lanes-configured, its settings and, when paused, held. */
export async function checkLaneLists(
  ctx: ScriptContext,
  mode: RepairMode,
  log: FindingLog,
  sightings: LaneSightings,
  batch: number,
): Promise<void> {
  for (const lanes of chunks(sightings.laneNames, batch)) {
    for (const found of await repairLaneLists(ctx, mode, lanes)) {
      log.add('lane-lists', found.lane, found.problem);
    }
  }
}

/** Recounts lane-active from the active set (bounded: see LANE_RECOUNT_MAX). */
export async function checkLaneActive(
  ctx: ScriptContext,
  mode: RepairMode,
  log: FindingLog,
  unchecked: Unchecked[],
): Promise<void> {
  const recount = await repairLaneActive(ctx, mode);
  if (!recount.recounted) {
    unchecked.push({
      check: 'lane-active agrees with the active set',
      reason: `active holds ${recount.active} jobs, more than one recount reads at once; run again when fewer are active`,
    });
    return;
  }
  for (const drift of recount.drifts) {
    log.add('lane-active', drift.lane, `stored ${drift.stored}, recounted ${drift.recounted}`);
  }
}
