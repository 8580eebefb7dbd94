// @ts-check
import { act } from './actions.js';
import { fill, h } from './dom.js';
import { count } from './format.js';
import { request, seg } from './http.js';

/** @typedef {import('./model.js').LaneOverview} LaneOverview */

/**
 * A queue's lanes: depths, a paused or held badge, and Pause lane / Resume lane. Redrawn only
 * when the lanes changed, so a button under the pointer stays the same element.
 * @param {string} queue
 * @param {HTMLElement} notice where actions say how they went
 */
export function laneTable(queue, notice) {
  const base = `/queues/${seg(queue)}`;
  const body = h('tbody');
  const element = h(
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
      body,
    ),
  );

  /** @param {LaneOverview} lane */
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

  let drawn = '';
  return {
    element,
    /** @param {LaneOverview[]} lanes */
    draw: (lanes) => {
      const seen = JSON.stringify(lanes);
      if (seen !== drawn) fill(body, ...lanes.map(laneRow));
      drawn = seen;
      element.hidden = lanes.length === 0;
    },
  };
}
