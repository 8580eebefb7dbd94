// @ts-check
/**
 * Which sets an event of each type can change (a job coming in, leaving, or showing other
 * data), so an open list reads again only for events that can change what it shows. The server
 * keeps the same table (lists/touched-sets.ts) for the first pages it shares between pages. A
 * type not named here (from a newer server) is taken to touch every set.
 */

/** @typedef {import('./routes.js').JobSet} JobSet */

/** @type {readonly JobSet[]} */
const ALL = ['pending', 'active', 'schedule', 'dead', 'completed'];

/** @type {Readonly<Record<string, readonly JobSet[]>>} */
const TOUCHES = {
  enqueued: ['pending', 'schedule'],
  debounced: ['schedule'],
  claimed: ['pending', 'active'],
  progress: ['active'],
  completed: ['active', 'completed'],
  failed: ['active', 'pending', 'schedule'],
  dead: ['active', 'dead'],
  released: ['active', 'pending'],
  reaped: ['active', 'pending'],
  throttled: ['active', 'pending'],
  promoted: ['schedule', 'pending'],
  retried: ['dead', 'pending'],
  updated: ['pending', 'schedule', 'dead'],
  drained: ['pending', 'schedule'],
  cleaned: ['pending', 'schedule', 'dead'],
  trimmed: ['dead'],
  removed: ALL,
  obliterated: ALL,
  extended: [],
  'lane-paused': [],
  'lane-resumed': [],
  'schedule-upserted': [],
  'schedule-removed': [],
};

/**
 * Whether an event of this type can change the jobs a list of this set shows.
 * @param {string} type
 * @param {JobSet} set
 */
export function touches(type, set) {
  const sets = Object.hasOwn(TOUCHES, type) ? TOUCHES[type] : ALL;
  return /** @type {readonly JobSet[]} */ (sets).includes(set);
}
