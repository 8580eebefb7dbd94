import type { ListState } from './list-sources';

const ALL: readonly ListState[] = ['pending', 'active', 'schedule', 'dead', 'completed'];

/**
 * Which listings an event of each type can change (a job coming in, leaving, or showing other
 * data). The page keeps the same table (page/client/job-events.js) to decide which events make
 * an open list read again; the server uses it to drop shared first pages those events made stale.
 * An event type not named here (a newer library's) is taken to touch every listing.
 */
const TOUCHES: Readonly<Record<string, readonly ListState[]>> = {
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
  // Lease heartbeats are not forwarded to pages (nothing they list changes but a deadline).
  extended: [],
  'lane-paused': [],
  'lane-resumed': [],
  'schedule-upserted': [],
  'schedule-removed': [],
};

export function listingsTouchedBy(type: string): readonly ListState[] {
  return Object.hasOwn(TOUCHES, type) ? TOUCHES[type] : ALL;
}
