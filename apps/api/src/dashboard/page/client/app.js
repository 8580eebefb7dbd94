// @ts-check
import { HttpError, request, whenUnauthorized } from './http.js';
import { jobView } from './job-detail.js';
import { connectLive } from './live.js';
import { showLogin } from './login.js';
import { mergeOverview } from './overview-merge.js';
import { overviewView } from './overview.js';
import { queueView } from './queue.js';
import { parseRoute } from './routes.js';

/**
 * The page's entry: asks whether a session is needed, shows the token form or the dashboard,
 * keeps one live connection open (taking the job events of the queue on screen) and hands what
 * it brings to the view on screen. Views are rebuilt on each navigation (hash change); between
 * navigations they update in place.
 */

/** @typedef {import('./model.js').Overview} Overview */
/** @typedef {import('./model.js').OverviewFrame} OverviewFrame */
/** @typedef {import('./model.js').View} View */
/** @typedef {import('./routes.js').Route} Route */

const root = /** @type {HTMLElement} */ (document.getElementById('view'));
const liveDot = /** @type {HTMLElement} */ (document.getElementById('live'));
const logout = /** @type {HTMLButtonElement} */ (document.getElementById('logout'));

/** @type {View | undefined} */
let view;
/** @type {Overview | undefined} */
let latest;
/** @type {import('./live.js').Live | undefined} */
let live;
let running = false;
let reading = false;

/** @param {import('./live.js').LiveState} state */
function showLive(state) {
  liveDot.dataset.state = state;
  liveDot.textContent = state;
}

/** The queue whose job events a place needs: its own, or none on the overview. @param {Route} place */
function queueOf(place) {
  return place.page === 'overview' ? undefined : place.queue;
}

function route() {
  if (!running) return;
  view?.dispose();
  const place = parseRoute(location.hash);
  document.title =
    place.page === 'overview' ? 'EchoMQ' : `${place.page === 'job' ? place.id : place.queue} · EchoMQ`;
  live?.follow(queueOf(place));
  view =
    place.page === 'queue'
      ? queueView(root, place, latest)
      : place.page === 'job'
        ? jobView(root, place)
        : overviewView(root, latest);
}

/** @param {Overview} overview */
function show(overview) {
  latest = overview;
  view?.overview(overview);
}

/** @param {OverviewFrame} frame */
function receive(frame) {
  const overview = mergeOverview(latest, frame);
  // A tail for a page further behind than it covers: read the whole overview instead.
  if (overview === 'behind') readOverview();
  else if (overview !== 'stale') show(overview);
}

/** The whole overview by a plain read (at start, so the page fills before the stream's first message). */
function readOverview() {
  if (reading) return;
  reading = true;
  request('/dashboard/api/overview')
    .then((/** @type {Overview} */ overview) => {
      if (running && (!latest || overview.seq > latest.seq)) show(overview);
    })
    .catch(() => {
      // The stream brings the next one; a 401 has already gone to the token form.
    })
    .finally(() => {
      reading = false;
    });
}

/** The session ended (or never was): back to the token form, nothing live. */
function signIn() {
  running = false;
  live?.close();
  live = undefined;
  view?.dispose();
  view = undefined;
  latest = undefined;
  logout.hidden = true;
  showLive('offline');
  showLogin(root, () => start(true));
}

/** @param {boolean} sessionRequired */
function start(sessionRequired) {
  running = true;
  logout.hidden = !sessionRequired;
  showLive('connecting');
  live = connectLive(
    {
      overview: receive,
      job: (event) => view?.job(event),
      lagged: () => view?.resync(),
      state: showLive,
      signedOut: signIn,
    },
    queueOf(parseRoute(location.hash)),
  );
  route();
  readOverview();
}

logout.addEventListener('click', () => {
  request('/dashboard/session', { method: 'DELETE' })
    .catch(() => {})
    .finally(signIn);
});
window.addEventListener('hashchange', route);
whenUnauthorized(() => {
  if (running) signIn();
});

request('/dashboard/session', { quiet401: true })
  .then((session) => {
    if (session.required && !session.authenticated) signIn();
    else start(Boolean(session.required));
  })
  .catch((error) => {
    showLive('offline');
    root.textContent = `The dashboard cannot reach the api: ${error instanceof HttpError ? error.message : String(error)}`;
  });
