// @ts-check
import { barChart } from './chart.js';
import { fill, h } from './dom.js';
import { count, percent, rate } from './format.js';
import { chartData, historyMark } from './history.js';
import { queueHref } from './routes.js';

/** @typedef {import('./model.js').Overview} Overview */
/** @typedef {import('./model.js').QueueOverview} QueueOverview */

const COUNTED = /** @type {const} */ (['pending', 'active', 'schedule', 'dead']);

/**
 * Throughput (completions per bucket) and failure share (failed and dead over every finished
 * attempt) of one queue's last minutes, as the two small charts the overview and the queue page
 * show; the figures beside them cover about the last minute.
 * @param {QueueOverview} queue
 * @param {Overview} overview
 */
export function queueCharts(queue, overview) {
  const data = chartData(queue.history, overview);
  const axis = { fromMs: data.fromMs, toMs: data.toMs, bucketMs: data.bucketMs };
  const minutes = Math.round((data.toMs - data.fromMs) / 60_000);
  const share = data.recentFailureShare;
  return [
    barChart({
      ...axis,
      label: 'completed',
      kind: 'throughput',
      bars: data.completed,
      figure: rate(data.recentRate),
      summary: `${count(data.totalCompleted)} completed in the last ${minutes} minutes; ${rate(data.recentRate)} over the last minute`,
    }),
    barChart({
      ...axis,
      label: 'failing',
      kind: 'failures',
      bars: data.failureShare,
      ceiling: 1,
      figure: share === null ? '–' : percent(share),
      summary: `${count(data.totalFailed)} failed attempts in the last ${minutes} minutes; ${share === null ? 'nothing finished' : percent(share)} over the last minute`,
    }),
  ];
}

/**
 * The lanes of a queue in one line, when there is more to say than "the default lane".
 * @param {QueueOverview} queue
 */
function laneLine(queue) {
  const lanes = queue.lanes.filter((lane) => lane.lane !== 'default' || lane.paused);
  if (lanes.length === 0) return null;
  return h(
    'ul',
    { class: 'lane-line', 'aria-label': `lanes of ${queue.queue}` },
    ...lanes.map((lane) =>
      h(
        'li',
        { dataset: { lane: lane.lane }, class: lane.paused ? 'paused' : null },
        h('span', { class: 'lane-name' }, lane.lane),
        ` ${count(lane.pending)} pending · ${count(lane.active)} active`,
        lane.paused ? h('span', { class: 'badge paused' }, 'paused') : null,
      ),
    ),
  );
}

/**
 * @param {QueueOverview} queue
 * @param {Overview} overview
 */
function row(queue, overview) {
  return h(
    'tr',
    { dataset: { queue: queue.queue, paused: queue.paused } },
    h(
      'th',
      { scope: 'row' },
      h('a', { href: queueHref(queue.queue), class: 'queue-link' }, queue.queue),
      queue.paused ? h('span', { class: 'badge paused' }, 'paused') : null,
      laneLine(queue),
    ),
    ...COUNTED.map((set) =>
      h(
        'td',
        { class: `num ${set}${set === 'dead' && queue.counts.dead > 0 ? ' alert' : ''}` },
        h('a', { href: queueHref(queue.queue, set), dataset: { count: set } }, count(queue.counts[set])),
      ),
    ),
    h('td', null, h('div', { class: 'charts' }, ...queueCharts(queue, overview))),
  );
}

/**
 * Every queue: its four depths, its lanes, its charts and whether it is paused. Redrawn whole
 * on each overview: it holds no input, so nothing is lost, and a few dozen rows draw in no time.
 * @param {HTMLElement} root
 * @param {Overview | undefined} initial
 * @returns {import('./model.js').View}
 */
export function overviewView(root, initial) {
  const body = h('tbody');
  const stamp = h('p', { class: 'muted stamp' });
  const table = h(
    'table',
    { class: 'overview' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        h('th', { scope: 'col' }, 'Queue'),
        ...COUNTED.map((set) => h('th', { scope: 'col', class: 'num set' }, set)),
        h('th', { scope: 'col' }, 'Last minutes'),
      ),
    ),
    body,
  );
  const empty = h(
    'p',
    { class: 'empty', hidden: true },
    'No queues yet. A queue appears here once a worker serves it or a job is enqueued to it.',
  );
  fill(root, h('section', { class: 'overview-page' }, h('h1', null, 'Queues'), table, empty, stamp));

  // A row is redrawn only when its queue's figures changed, so an idle row keeps its hover,
  // focus and any selected text; history gains a bucket at least every bucket's width.
  /** @type {Map<string, { seen: string, row: HTMLTableRowElement }>} */
  let rows = new Map();
  /** @param {Overview} overview */
  const draw = (overview) => {
    /** @type {typeof rows} */
    const next = new Map();
    for (const queue of overview.queues) {
      const { history, ...figures } = queue;
      const seen = `${JSON.stringify(figures)}|${historyMark(history)}`;
      const kept = rows.get(queue.queue);
      next.set(queue.queue, kept && kept.seen === seen ? kept : { seen, row: row(queue, overview) });
    }
    const sameQueues = [...rows.keys()].join('\n') === [...next.keys()].join('\n');
    if (sameQueues) {
      for (const [queue, entry] of next) {
        const before = rows.get(queue);
        if (before && before !== entry) before.row.replaceWith(entry.row);
      }
    } else {
      fill(body, ...[...next.values()].map((entry) => entry.row));
    }
    rows = next;
    table.hidden = overview.queues.length === 0;
    empty.hidden = overview.queues.length > 0;
    const total = overview.queuesTotal ?? overview.queues.length;
    const some =
      total > overview.queues.length
        ? `The first ${overview.queues.length} of ${total} queues, by name. `
        : '';
    stamp.textContent = `${some}Sampled ${new Date(overview.at).toLocaleTimeString()}, every ${overview.refreshMs / 1000} s`;
  };
  if (initial) draw(initial);

  return { overview: draw, job: () => {}, resync: () => {}, dispose: () => {} };
}
