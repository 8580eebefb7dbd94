// @ts-check
import { HttpError, request, whenUnauthorized } from './http.js';
import { jobView } from './job-detail.js';
import { connectLive } from './live.js';
import { showLogin } from './login.js';
import { overviewView } from './overview.js';
import { queueView } from './queue.js';
import { parseRoute } from './routes.js';

/**
 * The page's entry: asks whether a session is needed, shows the token form or the dashboard,
 * keeps one live connection open and hands what it brings to the view on screen. Views are
 * rebuilt on each navigation (hash change); between navigations they update in place.
 */

/** @typedef {import('./model.js').Overview} Overview */
/** @typedef {import('./model.js').View} View */

const root = /** @type {HTMLElement} */ (document.getElementById('view'));
const live = /** @type {HTMLElement} */ (document.getElementById('live'));
const logout = /** @type {HTMLButtonElement} */ (document.getElementById('logout'));

/** @type {View | undefined} */
let view;
/** @type {Overview | undefined} */
let latest;
/** @type {(() => void) | undefined} */
let closeLive;
let running = false;

/** @param {import('./live.js').LiveState} state */
function showLive(state) {
  live.dataset.state = state;
  live.textContent = state;
}

function route() {
  if (!running) return;
  view?.dispose();
  const place = parseRoute(location.hash);
  document.title =
    place.page === 'overview' ? 'EchoMQ' : `${place.page === 'job' ? place.id : place.queue} · EchoMQ`;
  view =
    place.page === 'queue'
      ? queueView(root, place, latest)
      : place.page === 'job'
        ? jobView(root, place)
        : overviewView(root, latest);
}

/** @param {Overview} overview */
function receive(overview) {
  latest = overview;
  view?.overview(overview);
}

/** The session ended (or never was): back to the token form, nothing live. */
function signIn() {
  running = false;
  closeLive?.();
  closeLive = undefined;
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
  closeLive = connectLive({
    overview: receive,
    job: (event) => view?.job(event),
    lagged: () => view?.resync(),
    state: showLive,
    signedOut: signIn,
  });
  route();
  // The first overview by a plain read, so the page fills before the stream's first message.
  request('/dashboard/api/overview')
    .then((overview) => {
      if (running && !latest) receive(overview);
    })
    .catch(() => {
      // The stream brings the next one; a 401 has already gone to the token form.
    });
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
