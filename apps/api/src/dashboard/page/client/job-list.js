// @ts-check
import { fill, h } from './dom.js';
import { firstLine, instant, json } from './format.js';
import { query, request, seg } from './http.js';
import { jobHref, queueHref } from './routes.js';

/** @typedef {import('./model.js').Job} Job */
/** @typedef {import('./routes.js').JobSet} JobSet */

const PAGE = 50;
/**
 * Live changes are read again at most this often, however busy the queue: one read a second per
 * open list at most, and only for events that can change its set (job-events.js). Pages told of
 * the same events ask at about the same moment, and the server answers identical first pages
 * with one read of Redis.
 */
const REFRESH_GAP_MS = 1000;

/** Which instant a set's rows show, and what it means there. */
const WHEN = {
  pending: { label: 'Enqueued', pick: (/** @type {Job} */ job) => job.enqueuedAt },
  active: { label: 'Lease until', pick: (/** @type {Job} */ job) => job.leaseDeadline },
  schedule: { label: 'Runs at', pick: (/** @type {Job} */ job) => job.runAt },
  dead: { label: 'Enqueued', pick: (/** @type {Job} */ job) => job.enqueuedAt },
  completed: { label: 'Finished', pick: (/** @type {Job} */ job) => job.finishedAt },
};

/**
 * The short text a row shows beside a job: its error when dead, its result when done, its
 * progress when running, else its data.
 * @param {JobSet} set
 * @param {Job} job
 */
function gist(set, job) {
  if (set === 'dead') return h('span', { class: 'error-line' }, firstLine(job.lastError, 120));
  if (set === 'completed') return 'result' in job ? json(job.result, 80) : '';
  if (set === 'active' && 'progress' in job) return `progress ${json(job.progress, 60)}`;
  return json(job.data, 80);
}

/**
 * @param {JobSet} set
 * @param {Job} job
 */
function jobRow(set, job) {
  return h(
    'tr',
    { dataset: { job: job.id } },
    h('td', null, h('a', { href: jobHref(job.queue, job.id), class: 'job-link mono' }, job.id)),
    h('td', { class: 'name' }, job.name || h('span', { class: 'muted' }, job.name === '' ? '(none)' : '')),
    h('td', null, job.lane ?? ''),
    h('td', { class: 'num' }, job.attempts === undefined ? '' : `${job.attempts}/${job.maxAttempts}`),
    h('td', { title: WHEN[set].pick(job) ?? '' }, instant(WHEN[set].pick(job))),
    h('td', { class: 'gist' }, gist(set, job)),
  );
}

/**
 * One set of one queue, filtered by name and lane, newest first for pending and dead and by
 * deadline for active and schedule (the api's order). Live changes re-read the first page; once
 * the reader has loaded more, the list stays put and offers a refresh instead of jumping.
 * @param {{ queue: string, set: JobSet, name: string, lane: string }} route
 */
export function jobList(route) {
  const { queue, set } = route;
  const name = h('input', { type: 'search', name: 'name', id: 'filter-name', value: route.name });
  const lane = h('input', { type: 'search', name: 'lane', id: 'filter-lane', value: route.lane });
  const form = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter jobs' },
    h('label', { for: 'filter-name' }, 'Name'),
    name,
    h('label', { for: 'filter-lane' }, 'Lane'),
    lane,
    h('button', { type: 'submit' }, 'Filter'),
    route.name || route.lane ? h('a', { href: queueHref(queue, set), class: 'clear' }, 'Clear') : null,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    location.hash = queueHref(queue, set, { name: name.value.trim(), lane: lane.value.trim() });
  });

  const body = h('tbody');
  const table = h(
    'table',
    { class: 'jobs', dataset: { set } },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ...['Job', 'Name', 'Lane', 'Attempts', WHEN[set].label, ''].map((title) =>
          h('th', { scope: 'col', class: title === 'Attempts' ? 'num' : null }, title),
        ),
      ),
    ),
    body,
  );
  const status = h('p', { class: 'muted list-status', role: 'status' });
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  const stale = h('button', { type: 'button', class: 'stale', hidden: true }, 'Changed since: refresh');
  const element = h('section', { class: 'job-list' }, form, stale, table, status, more);

  /** @type {string | null} */
  let next = null;
  let shown = 0;
  let pages = 0;
  let disposed = false;

  /** @param {string | null} after */
  const load = async (after) => {
    const path = `/dashboard/api/queues/${seg(queue)}/jobs${query({
      state: set,
      name: route.name,
      lane: route.lane,
      limit: PAGE,
      after,
    })}`;
    /** @type {{ jobs: Job[], next: string | null }} */
    const page = await request(path);
    if (disposed) return;
    const rows = page.jobs.map((job) => jobRow(set, job));
    if (after === null) {
      fill(body, ...rows);
      shown = rows.length;
      pages = 1;
      stale.hidden = true;
    } else {
      body.append(...rows);
      shown += rows.length;
      pages += 1;
    }
    next = page.next;
    more.hidden = next === null;
    const filtered = route.name || route.lane;
    status.textContent =
      shown === 0
        ? next === null
          ? filtered
            ? 'No job matches.'
            : `No ${set} jobs.`
          : 'None found in the part scanned so far: load more to keep looking.'
        : `${shown} shown${next === null ? '' : ', more to load'}.`;
  };

  /** @param {string | null} after */
  const loadShowingErrors = (after) =>
    load(after).catch((/** @type {unknown} */ error) => {
      status.textContent = `Could not list jobs: ${error instanceof Error ? error.message : String(error)}`;
    });

  more.addEventListener('click', () => {
    more.disabled = true;
    void loadShowingErrors(next).finally(() => {
      more.disabled = false;
    });
  });
  stale.addEventListener('click', () => void loadShowingErrors(null));

  // At most one read in flight, and one more queued behind it, however many events arrive.
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let inFlight = false;
  let dirty = false;
  let lastRead = 0;
  const run = async () => {
    timer = undefined;
    inFlight = true;
    lastRead = Date.now();
    dirty = false;
    await loadShowingErrors(null);
    inFlight = false;
    if (dirty) changed();
  };
  const changed = () => {
    if (disposed) return;
    if (pages > 1) {
      stale.hidden = false;
      return;
    }
    if (inFlight || timer !== undefined) {
      dirty = true;
      return;
    }
    // The first change after a quiet spell is read at once; a burst waits out the gap.
    timer = setTimeout(() => void run(), Math.max(0, lastRead + REFRESH_GAP_MS - Date.now()));
  };

  lastRead = Date.now();
  void loadShowingErrors(null);
  return {
    element,
    /** Something changed in this set (or may have): read it again when showing the first page. */
    changed,
    dispose: () => {
      disposed = true;
      clearTimeout(timer);
    },
  };
}
