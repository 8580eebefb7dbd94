// @ts-check
import { act } from './actions.js';
import { confirmButton, fill, h } from './dom.js';
import { count } from './format.js';
import { historyMark } from './history.js';
import { request, seg } from './http.js';
import { touches } from './job-events.js';
import { jobList } from './job-list.js';
import { queueCharts } from './overview.js';
import { laneTable } from './queue-lanes.js';
import { queueStateReader } from './queue-state.js';
import { queueHref, SETS } from './routes.js';

/** @typedef {import('./model.js').Overview} Overview */
/** @typedef {import('./model.js').QueueOverview} QueueOverview */
/** @typedef {import('./model.js').Counts} Counts */

/**
 * One queue: paused or not and the buttons that change it, drain and retry of every dead job,
 * its charts, its lanes (each pausable), and one of its sets as a filtered job list. Its state
 * comes from the overview; a queue the overview does not hold (past its first 100 by name) is
 * read through the api's own routes at each overview instead, without charts. Pause stays
 * disabled until the state is known.
 * @param {HTMLElement} root
 * @param {{ queue: string, set: import('./routes.js').JobSet, name: string, lane: string }} route
 * @param {Overview | undefined} initial
 * @returns {import('./model.js').View}
 */
export function queueView(root, route, initial) {
  const { queue, set } = route;
  const base = `/queues/${seg(queue)}`;
  const notice = h('p', { class: 'notice', role: 'status' });
  const badge = h('span', { class: 'badge paused', hidden: true }, 'paused');
  /** @type {boolean | undefined} unknown until the overview or a read says */
  let paused;
  let acting = false;

  const pause = h('button', { type: 'button', class: 'primary', disabled: true }, 'Pause');
  pause.addEventListener('click', () => {
    const verb = paused ? 'resume' : 'pause';
    acting = true;
    pause.disabled = true;
    void act(notice, async () => {
      const answer = await request(`${base}/${verb}`, { method: 'POST' });
      showPaused(answer.paused);
      return answer.paused ? `Paused ${queue}: workers claim nothing from it.` : `Resumed ${queue}.`;
    }).finally(() => {
      acting = false;
      pause.disabled = paused === undefined;
    });
  });
  const retryDead = confirmButton('Retry all dead', 'Click again to retry every dead job', () =>
    act(notice, async () => {
      const answer = await request(`${base}/dead/retry`, { method: 'POST', body: {} });
      return `Retried ${count(answer.retried)} dead job${answer.retried === 1 ? '' : 's'}.`;
    }),
  );
  const drain = confirmButton(
    'Drain',
    'Click again to remove every pending and scheduled job',
    () =>
      act(notice, async () => {
        const answer = await request(`${base}/drain`, { method: 'POST', body: {} });
        return `Drained ${queue}: removed ${count(answer.removed)} job${answer.removed === 1 ? '' : 's'}.`;
      }),
    { class: 'danger' },
  );

  /** @param {boolean} value */
  const showPaused = (value) => {
    paused = value;
    badge.hidden = !value;
    pause.textContent = value ? 'Resume' : 'Pause';
    if (!acting) pause.disabled = false;
  };

  const tabs = h('nav', { class: 'tabs', 'aria-label': 'Job sets' });
  const charts = h('div', { class: 'queue-charts' });
  const lanes = laneTable(queue, notice);
  const list = jobList(route);

  fill(
    root,
    h(
      'section',
      { class: 'queue-page', dataset: { queue } },
      h('nav', { class: 'crumbs' }, h('a', { href: '#/' }, 'Queues'), ' / ', queue),
      h(
        'header',
        { class: 'queue-head' },
        h('h1', null, queue),
        badge,
        h('span', { class: 'spacer' }),
        pause,
        retryDead,
        drain,
      ),
      notice,
      charts,
      lanes.element,
      tabs,
      list.element,
    ),
  );

  /** @param {Counts | undefined} counts */
  const drawTabs = (counts) => {
    fill(
      tabs,
      ...SETS.map((name) =>
        h(
          'a',
          {
            href: queueHref(queue, name, { name: route.name, lane: route.lane }),
            class: name === set ? 'tab current' : 'tab',
            'aria-current': name === set ? 'page' : null,
            dataset: { set: name },
          },
          name,
          counts && name !== 'completed'
            ? h('span', { class: 'tab-count', dataset: { count: name } }, count(counts[name]))
            : null,
        ),
      ),
    );
  };

  // The list reads again when what it shows may have moved: its set's depth, or for completed
  // the completions; this also covers events the page never got.
  /** @type {string | undefined} */
  let lastSeen;
  /** @param {string} mark */
  const noteChange = (mark) => {
    if (lastSeen !== undefined && mark !== lastSeen) list.changed();
    lastSeen = mark;
  };

  let drawnHistory = '';
  /**
   * @param {QueueOverview} q
   * @param {Overview} overview
   */
  const drawFromOverview = (q, overview) => {
    drawTabs(q.counts);
    showPaused(q.paused);
    const mark = historyMark(q.history);
    if (mark !== drawnHistory) fill(charts, ...queueCharts(q, overview));
    drawnHistory = mark;
    lanes.draw(q.lanes);
    const last = q.history[q.history.length - 1];
    noteChange(set === 'completed' ? `h${last?.at}:${last?.completed}` : `c${q.counts[set]}`);
  };

  const outside = queueStateReader(
    queue,
    (state) => {
      drawTabs(state.counts);
      showPaused(state.paused);
      lanes.draw(state.lanes);
      noteChange(set === 'completed' ? `m${state.completed}` : `c${state.counts[set]}`);
    },
    (error) => {
      notice.classList.add('problem');
      notice.textContent = `Could not read the queue: ${error instanceof Error ? error.message : String(error)}`;
    },
  );

  /** @param {Overview} overview */
  const draw = (overview) => {
    const q = overview.queues.find((candidate) => candidate.queue === queue);
    if (q) return drawFromOverview(q, overview);
    drawnHistory = '';
    const beyond = overview.queuesTotal > overview.queues.length;
    fill(
      charts,
      h(
        'p',
        { class: 'muted outside' },
        beyond
          ? `This queue is not among the overview's first ${count(overview.queues.length)} of ${count(overview.queuesTotal)} queues (by name): its depths and lanes are read for this page alone, and it has no charts.`
          : 'This queue has no jobs, workers or settings yet.',
      ),
    );
    outside.ask();
  };
  drawTabs(undefined);
  if (initial) draw(initial);

  return {
    overview: draw,
    job: (event) => {
      if (event.queue === queue && touches(event.type, set)) list.changed();
    },
    resync: () => list.changed(),
    dispose: () => {
      list.dispose();
      outside.dispose();
    },
  };
}
