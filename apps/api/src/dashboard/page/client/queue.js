// @ts-check
import { confirmButton, fill, h } from './dom.js';
import { count } from './format.js';
import { request, seg } from './http.js';
import { jobList } from './job-list.js';
import { queueCharts } from './overview.js';
import { queueHref, SETS } from './routes.js';

/** @typedef {import('./model.js').Overview} Overview */
/** @typedef {import('./model.js').QueueOverview} QueueOverview */

/**
 * Runs an action of the page and says how it went in the notice line.
 * @param {HTMLElement} notice
 * @param {() => Promise<string>} action resolves with what to tell the reader
 */
async function act(notice, action) {
  notice.classList.remove('problem');
  try {
    notice.textContent = await action();
  } catch (error) {
    notice.classList.add('problem');
    notice.textContent = error instanceof Error ? error.message : String(error);
  }
}

/**
 * One queue: paused or not and the buttons that change it, drain and retry of every dead job,
 * its charts, its lanes (each pausable), and one of its sets as a filtered job list.
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
  let paused = false;

  const pause = h('button', { type: 'button', class: 'primary' }, 'Pause');
  pause.addEventListener('click', () => {
    const verb = paused ? 'resume' : 'pause';
    pause.disabled = true;
    void act(notice, async () => {
      const answer = await request(`${base}/${verb}`, { method: 'POST' });
      showPaused(answer.paused);
      return answer.paused ? `Paused ${queue}: workers claim nothing from it.` : `Resumed ${queue}.`;
    }).finally(() => {
      pause.disabled = false;
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
  };

  const tabs = h('nav', { class: 'tabs', 'aria-label': 'Job sets' });
  const charts = h('div', { class: 'queue-charts' });
  const lanesBody = h('tbody');
  const lanes = h(
    'section',
    { class: 'lanes', hidden: true },
    h('h2', null, 'Lanes'),
    h(
      'table',
      null,
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          ...['Lane', 'Pending', 'Active', ''].map((title) =>
            h('th', { scope: 'col', class: title === 'Pending' || title === 'Active' ? 'num' : null }, title),
          ),
        ),
      ),
      lanesBody,
    ),
  );
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
      lanes,
      tabs,
      list.element,
    ),
  );

  /** @param {QueueOverview | undefined} q */
  const drawTabs = (q) => {
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
          q && name !== 'completed'
            ? h('span', { class: 'tab-count', dataset: { count: name } }, count(q.counts[name]))
            : null,
        ),
      ),
    );
  };

  /** @param {import('./model.js').LaneOverview} lane */
  const laneRow = (lane) => {
    const toggle = h('button', { type: 'button' }, lane.paused ? 'Resume lane' : 'Pause lane');
    toggle.addEventListener('click', () => {
      toggle.disabled = true;
      const verb = lane.paused ? 'resume' : 'pause';
      void act(notice, async () => {
        const answer = await request(`${base}/lanes/${seg(lane.lane)}/${verb}`, { method: 'POST' });
        lane.paused = answer.paused;
        toggle.textContent = answer.paused ? 'Resume lane' : 'Pause lane';
        row.classList.toggle('paused', answer.paused);
        return `${answer.paused ? 'Paused' : 'Resumed'} lane ${lane.lane}.`;
      }).finally(() => {
        toggle.disabled = false;
      });
    });
    const row = h(
      'tr',
      { dataset: { lane: lane.lane }, class: lane.paused ? 'paused' : null },
      h(
        'th',
        { scope: 'row' },
        lane.lane,
        lane.paused ? h('span', { class: 'badge paused' }, 'paused') : null,
        !lane.paused && lane.held
          ? h('span', { class: 'badge', title: 'has work it may not start now' }, 'held')
          : null,
      ),
      h('td', { class: 'num' }, count(lane.pending)),
      h('td', { class: 'num' }, count(lane.active)),
      h('td', null, toggle),
    );
    return row;
  };

  /** @type {string | undefined} */
  let lastSeen;
  let drawn = { history: '', lanes: '' };
  /** @param {Overview} overview */
  const draw = (overview) => {
    const q = overview.queues.find((candidate) => candidate.queue === queue);
    drawTabs(q);
    if (!q) {
      fill(charts, h('p', { class: 'muted' }, 'This queue has no jobs, workers or settings yet.'));
      return;
    }
    showPaused(q.paused);
    // Redrawn only when they changed, so a button under the pointer stays the same element.
    const history = JSON.stringify(q.history);
    if (history !== drawn.history) fill(charts, ...queueCharts(q, overview));
    const laneState = JSON.stringify(q.lanes);
    if (laneState !== drawn.lanes) fill(lanesBody, ...q.lanes.map(laneRow));
    drawn = { history, lanes: laneState };
    lanes.hidden = q.lanes.length === 0;
    // The list reads again when its set's depth moved (or anything completed), which also
    // covers events this page never got.
    const last = q.history[q.history.length - 1];
    const completedAt = set === 'completed' && last && last.completed > 0 ? last.at : '';
    const seen = JSON.stringify([q.counts, completedAt]);
    if (lastSeen !== undefined && seen !== lastSeen) list.changed();
    lastSeen = seen;
  };
  drawTabs(undefined);
  if (initial) draw(initial);

  return {
    overview: draw,
    job: (event) => {
      if (event.queue === queue) list.changed();
    },
    resync: () => list.changed(),
    dispose: () => list.dispose(),
  };
}
