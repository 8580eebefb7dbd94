/**
 * The reference model of flow control (docs/flow-control.md), written from the documented
 * scheduling: the ready sets per level with each lane's pass, the levels' virtual times, the
 * lanes held back (at a cap, out of rate room, paused, throttled) with their levels, the lane
 * timers, the limits and the rate windows' counts.
 *
 * It mirrors the scripts' helpers one for one (offer, drained, hold_lane, try_restore,
 * lanes_due, leaving().settle, window_room, the claim's walk) so that the model predicts
 * WHICH jobs a claim starts, and every flow key's content after each step. It never reads
 * Redis; jobs are the Model's (it asks for a lane's pending ids and active count).
 *
 * Times only the server knows (a timer set to "now + hold", a rate window's opening) are kept
 * as "in the future"; a timer rewritten into the past by a time-passing step is exact and due.
 * Rate counts are kept as a sum per window (the slice a start falls in is the server's).
 */
import { CLAIM_HOLDS_MAX, RATE_SLICES } from '@app/echomq/scripts/lua/flow';

export const DEFAULT_LANE = 'default';
/** The lanes a run uses (byte order: 'a' < 'b' < 'c' < 'default', the tie-break of equal passes). */
export const LANES = [DEFAULT_LANE, 'a', 'b', 'c'] as const;
export const TOP_LEVEL = 9;
/** Rate windows long enough that none opens during a run: the outcome is a count of claims. */
export const RATE_WINDOWS = [3_600_000, 7_200_000] as const;
/** A throttle's hold: longer than any rate window's opening, so a lane timer it sets always wins. */
export const THROTTLE_HOLD_MS = 10_800_000;

/** The settings hash: rm/rw queue rate, gc global concurrency, lc lane concurrency, lm/lw lane rate. */
export type SettingField = 'rm' | 'rw' | 'gc' | 'lc' | 'lm' | 'lw';
export type Settings = Partial<Record<SettingField, number>>;

/** A lane's own settings (hash lane:<lane>): w weight, k concurrency. */
export type LaneSettings = Partial<Record<'w' | 'k', number>>;

/** Starts counted in a rate hash: all under one slice size g (a window change drops the rest). */
export interface RateCount {
  readonly g: number;
  sum: number;
}

/** A lane timer: in the future (set from server time), or rewritten into the past (due). */
export type Timer = { readonly due: false } | { readonly due: true; readonly value: number };

/** What the flow model needs of the jobs. */
export interface JobsOfLanes {
  /** Ids pending in (lane, level), in id order. */
  pending(lane: string, level: number): number;
  /** Jobs of the lane in active. */
  active(lane: string): number;
  /** Claims up to k of (lane, level)'s pending jobs (oldest first, crash suspects as the claim says). */
  take(lane: string, level: number, k: number): Take;
}

/**
 * What one lane's turn took: how many jobs (orphans included); `stop` when crash suspects
 * ended it: 'alone' (one taken alone: the walk ends), 'aside' (only suspects left within
 * reach: the lane sits out the rest of the walk); `spent` when the call's skips ran out (the
 * walk ends).
 */
export interface Take {
  readonly took: number;
  readonly stop: 'alone' | 'aside' | null;
  readonly spent: boolean;
}

/** What one claim's walk did (for the reply and the coverage counts). */
export interface Walk {
  got: number;
  readonly heldByCap: string[];
  readonly heldByRate: string[];
  /** Lanes that started more than one job in one turn (their pass stayed at or below the next). */
  readonly multiTake: { lane: string; k: number; weight: number }[];
  readonly levels: number[];
  /** The walk stopped at CLAIM_HOLDS_MAX lanes held back (or set aside). */
  holdsMaxed: boolean;
  /** Lanes that sat out the rest of the walk, only crash suspects left within their reach. */
  readonly setAside: string[];
  /** Jobs still wanted when the walk ended, and the level it ended at. */
  left: number;
  level: number;
}

export function rateSlice(window: number): number {
  return Math.max(1, Math.floor(window / RATE_SLICES));
}

export class Flow {
  /** ready:<level>: lane -> pass. */
  readonly ready = new Map<number, Map<string, number>>();
  readonly vtime = new Map<number, number>();
  /** held: lane -> its levels as digits, in the order they were noted. */
  readonly held = new Map<string, string>();
  /** lane-timers: rate-held lanes (their window's opening). */
  readonly timers = new Map<string, Timer>();
  /** lane-holds: throttled lanes (a RateLimitedError of scope lane). */
  readonly holds = new Map<string, Timer>();
  readonly pausedLanes = new Set<string>();
  readonly laneSettings = new Map<string, LaneSettings>();
  settings: Settings = {};
  /** rate (the queue's) and lane-rate:<lane>. */
  rate: RateCount | null = null;
  readonly laneRate = new Map<string, RateCount>();
  /** The queue hold (a throttle of scope queue): its longest asked ms while it lasts. */
  holdMs: number | null = null;
  waiting = false;
  /** The flow mark (key 'flow'): set by limits, lane settings or pauses, throttles, a level above 0. */
  inUse = false;

  constructor(private readonly jobs: JobsOfLanes) {}

  // ---------------------------------------------------------------- reads

  readyOf(level: number): Map<string, number> {
    let set = this.ready.get(level);
    if (!set) {
      set = new Map();
      this.ready.set(level, set);
    }
    return set;
  }

  /** A ready set as Redis orders it: pass, then lane name bytes. */
  readyOrder(level: number): [string, number][] {
    return [...this.readyOf(level)].sort(([a, pa], [b, pb]) => pa - pb || (a < b ? -1 : a > b ? 1 : 0));
  }

  /** A lane's weight (default 1) and cap (its own, else laneConcurrency, else none). */
  rules(lane: string): { weight: number; cap: number | undefined } {
    const own = this.laneSettings.get(lane) ?? {};
    return { weight: own.w ?? 1, cap: own.k ?? this.settings.lc };
  }

  dueTimers(): string[] {
    return [...this.timers].filter(([, t]) => t.due).map(([lane]) => lane);
  }

  dueHolds(): string[] {
    return [...this.holds].filter(([, t]) => t.due).map(([lane]) => lane);
  }

  /** Whether any level has a ready lane. */
  anyReady(): boolean {
    return [...this.ready.values()].some((set) => set.size > 0);
  }

  // ---------------------------------------------------------------- the scripts' helpers

  /** Work arrived in (lane, level): join ready at vtime, or note the level while held. */
  offer(lane: string, level: number): void {
    if (level > 0) this.inUse = true;
    const held = this.held.get(lane);
    if (held !== undefined) {
      if (!held.includes(String(level))) this.held.set(lane, held + String(level));
      return;
    }
    const ready = this.readyOf(level);
    if (!ready.has(lane)) ready.set(lane, this.vtime.get(level) ?? 0);
  }

  /** A job left (lane, level)'s pending other than by a claim. */
  drained(lane: string, level: number): void {
    if (this.jobs.pending(lane, level) > 0) return;
    this.readyOf(level).delete(lane);
    const held = this.held.get(lane);
    if (held !== undefined && held.includes(String(level))) {
      this.held.set(lane, held.replace(String(level), ''));
    }
  }

  /** Out of ready at every level, the levels noted (pause, a lane-scoped throttle). */
  holdLane(lane: string): void {
    let levels = this.held.get(lane) ?? '';
    for (let level = 0; level <= TOP_LEVEL; level++) {
      if (this.readyOf(level).delete(lane) && !levels.includes(String(level))) levels += String(level);
    }
    this.held.set(lane, levels);
  }

  /** A held lane returns when nothing holds it; true when it returned with work. */
  tryRestore(lane: string): boolean {
    const levels = this.held.get(lane);
    if (levels === undefined) return false;
    if (this.pausedLanes.has(lane) || this.timers.has(lane) || this.holds.has(lane)) return false;
    const { cap } = this.rules(lane);
    if (cap !== undefined && this.jobs.active(lane) >= cap) return false;
    this.held.delete(lane);
    let any = false;
    for (const digit of levels) {
      const level = Number(digit);
      if (this.jobs.pending(lane, level) > 0) {
        const ready = this.readyOf(level);
        if (!ready.has(lane)) ready.set(lane, this.vtime.get(level) ?? 0);
        any = true;
      }
    }
    return any;
  }

  /** Due lane timers, then due throttle holds (only rewritten ones are): each lane may run again. */
  lanesDue(): string[] {
    const restored: string[] = [];
    for (const [due, map] of [
      [this.dueTimers(), this.timers],
      [this.dueHolds(), this.holds],
    ] as const) {
      for (const lane of due) {
        map.delete(lane);
        if (this.tryRestore(lane)) restored.push(lane);
      }
    }
    return restored;
  }

  /** Jobs of these lanes (first-seen order) left active: lanes return, waiting is cleared. */
  settle(lanes: readonly string[]): string[] {
    const restored = lanes.filter((lane) => this.tryRestore(lane));
    if (lanes.length > 0) this.waiting = false;
    return restored;
  }

  /** Room for starts in a rate hash (undefined key: none counted yet). Drops counts of another slice size. */
  private windowRoom(count: RateCount | null | undefined, max: number, window: number): number {
    const live = count && count.g === rateSlice(window) ? count.sum : 0;
    return Math.max(0, max - live);
  }

  /** The count of a rate hash after window_room read it under this window (stale slices dropped). */
  private afterRoom(count: RateCount | null | undefined, window: number): RateCount | null {
    return count && count.g === rateSlice(window) ? count : null;
  }

  private counted(count: RateCount | null, n: number, window: number): RateCount {
    const g = rateSlice(window);
    return count && count.g === g ? { g, sum: count.sum + n } : { g, sum: n };
  }

  /** The queue's rate room now (and drops counts of another window, as window_room does). */
  queueRateRoom(): number | null {
    const { rm, rw } = this.settings;
    if (rm === undefined || rw === undefined) return null;
    const room = this.windowRoom(this.rate, rm, rw);
    this.rate = this.afterRoom(this.rate, rw);
    return room;
  }

  countQueueStarts(n: number): void {
    const { rw } = this.settings;
    if (rw !== undefined) this.rate = this.counted(this.rate, n, rw);
  }

  /**
   * The claim's walk over the ready sets, for up to `want` jobs: highest level first; the
   * lane with the smallest pass (ties: name order); a lane at its cap or out of rate room is
   * held at every level (with a timer for rate), at most CLAIM_HOLDS_MAX per call; else it
   * takes k = min(room, floor((next pass - pass) * weight + 1e-9) + 1) jobs, its pass grows by
   * took / weight and becomes vtime[level] (or it leaves ready when it ran out of work).
   */
  walk(want: number): Walk {
    const walk: Walk = {
      got: 0,
      heldByCap: [],
      heldByRate: [],
      multiTake: [],
      levels: [],
      holdsMaxed: false,
      setAside: [],
      left: want,
      level: TOP_LEVEL,
    };
    const { lm, lw } = this.settings;
    let left = want;
    let level = TOP_LEVEL;
    const aside: [number, string, number][] = [];
    while (left > 0 && level >= 0) {
      const top = this.readyOrder(level).slice(0, 2);
      if (top.length === 0) {
        level -= 1;
        continue;
      }
      const [lane, pass] = top[0];
      const { weight, cap } = this.rules(lane);
      let room = left;
      let limitedByRate = false;
      if (cap !== undefined) room = Math.min(room, cap - this.jobs.active(lane));
      if (room > 0 && lm !== undefined && lw !== undefined) {
        const count = this.laneRate.get(lane);
        const laneRoom = this.windowRoom(count, lm, lw);
        const kept = this.afterRoom(count, lw);
        if (kept) this.laneRate.set(lane, kept);
        else this.laneRate.delete(lane);
        if (laneRoom <= 0) limitedByRate = true;
        room = Math.min(room, laneRoom);
      }
      const ready = this.readyOf(level);
      if (room <= 0) {
        this.holdLane(lane);
        if (limitedByRate) {
          this.timers.set(lane, { due: false });
          walk.heldByRate.push(lane);
        } else walk.heldByCap.push(lane);
        if (walk.heldByCap.length + walk.heldByRate.length + walk.setAside.length >= CLAIM_HOLDS_MAX) {
          walk.holdsMaxed = true;
          break;
        }
        continue;
      }
      if (top.length > 1) room = Math.min(room, Math.floor((top[1][1] - pass) * weight + 1e-9) + 1);
      const { took, stop, spent } = this.jobs.take(lane, level, room);
      const after = pass + took / weight;
      // (a lane a suspect stopped keeps its work, so it stays ready)
      if ((took < room && stop === null) || this.jobs.pending(lane, level) === 0) {
        if (took > 0) this.vtime.set(level, after);
        ready.delete(lane);
      } else if (top.length > 1) {
        // (a lane alone at its level keeps its pass, and the level its virtual time)
        if (took > 0) this.vtime.set(level, after);
        ready.set(lane, after);
      }
      if (took > 0) {
        if (lm !== undefined && lw !== undefined) {
          this.laneRate.set(lane, this.counted(this.laneRate.get(lane) ?? null, took, lw));
        }
        if (took > 1 && top.length > 1) walk.multiTake.push({ lane, k: took, weight });
        walk.levels.push(level);
      }
      if (stop === 'aside') {
        // Out of ready for the rest of the walk; back at the pass it has now at the end.
        aside.push([level, lane, ready.get(lane)!]);
        ready.delete(lane);
        walk.setAside.push(lane);
      }
      walk.got += took;
      left -= took;
      const held = walk.heldByCap.length + walk.heldByRate.length + walk.setAside.length;
      if (stop === 'alone' || spent) break;
      if (held >= CLAIM_HOLDS_MAX) {
        walk.holdsMaxed = true;
        break;
      }
    }
    for (const [at, lane, pass] of aside) this.readyOf(at).set(lane, pass);
    walk.left = left;
    walk.level = level;
    return walk;
  }

  // ---------------------------------------------------------------- admin calls

  /**
   * set-limits: '' (null) clears; a lane rate given drops every rate timer; when a lane limit
   * (lc, lm) was given, every held lane that may run returns.
   */
  writeLimits(fields: readonly (readonly [SettingField, number | null])[]): string[] {
    this.inUse = true;
    const next = { ...this.settings };
    for (const [field, value] of fields) {
      if (value === null) delete next[field];
      else next[field] = value;
    }
    this.settings = next;
    const given = new Set(fields.map(([field]) => field));
    if (given.has('lm')) this.timers.clear();
    const restored =
      given.has('lc') || given.has('lm') ? [...this.held.keys()].filter((lane) => this.tryRestore(lane)) : [];
    this.waiting = false;
    return restored;
  }

  setLane(lane: string, fields: readonly (readonly ['w' | 'k', number | null])[]): boolean {
    this.inUse = true;
    const next = { ...(this.laneSettings.get(lane) ?? {}) };
    for (const [field, value] of fields) {
      if (value === null) delete next[field];
      else next[field] = value;
    }
    if (Object.keys(next).length === 0) this.laneSettings.delete(lane);
    else this.laneSettings.set(lane, next);
    // (lanes-configured is the set of laneSettings' keys)
    return this.tryRestore(lane);
  }

  /** pause-lane: true when it was not paused before. */
  pauseLane(lane: string): boolean {
    this.inUse = true;
    const was = this.pausedLanes.has(lane);
    this.pausedLanes.add(lane);
    this.holdLane(lane);
    return !was;
  }

  /** resume-lane: whether it was paused, and whether it returned with work. */
  resumeLane(lane: string): { was: boolean; restored: boolean } {
    const was = this.pausedLanes.delete(lane);
    this.holds.delete(lane);
    return { was, restored: this.tryRestore(lane) };
  }

  /** throttle, scope lane: a hold in lane-holds (the later of it and one already there), out of ready. */
  throttleLane(lane: string): void {
    this.inUse = true;
    this.holds.set(lane, { due: false });
    this.holdLane(lane);
  }

  throttleQueue(ms: number): void {
    this.inUse = true;
    this.holdMs = Math.max(this.holdMs ?? 0, ms);
  }
}
