// @ts-check
import { request } from './http.js';

/**
 * The page's one live connection: server-sent events from /dashboard/api/events. `overview`
 * carries the depths and history the server sampled; `job` names a job something happened to;
 * `lagged` says the server dropped events for this page, so views read again instead of trusting
 * what they hold. EventSource reconnects by itself after a network error; a refusal (the session
 * ended) closes it for good, so that case asks the api whether the session still stands.
 */

/** @typedef {'connecting' | 'live' | 'reconnecting' | 'offline'} LiveState */
/** @typedef {{ queue: string, type: string, id?: string, ids?: string[] }} JobEvent */

/**
 * @typedef {object} LiveHandlers
 * @property {(overview: any) => void} overview
 * @property {(event: JobEvent) => void} job
 * @property {() => void} lagged
 * @property {(state: LiveState) => void} state
 * @property {() => void} signedOut
 */

const EVENTS_PATH = '/dashboard/api/events';
const RETRY_MAX_MS = 30_000;

/**
 * @param {MessageEvent} message
 * @returns {any}
 */
function data(message) {
  try {
    return JSON.parse(String(message.data));
  } catch {
    return undefined;
  }
}

/**
 * Opens the stream; the returned function closes it and stops reconnecting.
 * @param {LiveHandlers} on
 * @returns {() => void}
 */
export function connectLive(on) {
  /** @type {EventSource | undefined} */
  let source;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let retry;
  let closed = false;
  let backoffMs = 1000;

  const open = () => {
    if (closed) return;
    const stream = new EventSource(EVENTS_PATH, { withCredentials: true });
    source = stream;
    stream.addEventListener('open', () => {
      backoffMs = 1000;
      on.state('live');
    });
    stream.addEventListener('overview', (message) => {
      const overview = data(message);
      if (overview) on.overview(overview);
    });
    stream.addEventListener('job', (message) => {
      const event = data(message);
      if (event && typeof event.queue === 'string') on.job(event);
    });
    stream.addEventListener('lagged', () => on.lagged());
    stream.addEventListener('error', () => {
      if (closed) return;
      if (stream.readyState !== EventSource.CLOSED) {
        on.state('reconnecting');
        return;
      }
      on.state('offline');
      void recover();
    });
  };

  const recover = async () => {
    try {
      const session = await request('/dashboard/session', { quiet401: true });
      if (session?.required && !session.authenticated) {
        on.signedOut();
        return;
      }
    } catch {
      // The api is unreachable: try the stream again later.
    }
    if (closed) return;
    retry = setTimeout(open, backoffMs);
    backoffMs = Math.min(backoffMs * 2, RETRY_MAX_MS);
  };

  open();
  return () => {
    closed = true;
    clearTimeout(retry);
    source?.close();
  };
}
