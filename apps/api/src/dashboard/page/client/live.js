// @ts-check
import { apiUrl, query, request } from './http.js';

/**
 * The page's one live connection: server-sent events from /dashboard/api/events. `overview`
 * carries the depths and history the server sampled (whole at first, then only what changed:
 * see overview-merge.js); `job` names a job something happened to, in the one queue the view on
 * screen shows (`?queue=`: the overview takes none); `lagged` says the server dropped events for
 * this page, so views read again instead of trusting what they hold. EventSource reconnects by
 * itself after a network error, and the views then read again too (events were missed); a
 * refusal (the session ended) closes it for good, so that case asks the api whether the session
 * still stands.
 */

/** @typedef {'connecting' | 'live' | 'reconnecting' | 'offline'} LiveState */
/** @typedef {{ queue: string, type: string, id: string | null }} JobEvent */

/**
 * @typedef {object} LiveHandlers
 * @property {(frame: import('./model.js').OverviewFrame) => void} overview
 * @property {(event: JobEvent) => void} job
 * @property {() => void} lagged
 * @property {(state: LiveState) => void} state
 * @property {() => void} signedOut
 */

/**
 * @typedef {object} Live
 * @property {(queue: string | undefined) => void} follow the queue whose job events to take
 *   (the stream is opened again when it changes)
 * @property {() => void} close
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
 * Opens the stream.
 * @param {LiveHandlers} on
 * @param {string | undefined} initialQueue the queue the first view shows, if any
 * @returns {Live}
 */
export function connectLive(on, initialQueue) {
  /** @type {EventSource | undefined} */
  let source;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let retry;
  let closed = false;
  let backoffMs = 1000;
  let queue = initialQueue;
  /** The stream dropped since it last opened: what the views show may have missed events. */
  let dropped = false;

  const open = () => {
    if (closed) return;
    const stream = new EventSource(apiUrl(`${EVENTS_PATH}${query({ queue })}`), { withCredentials: true });
    source = stream;
    stream.addEventListener('open', () => {
      backoffMs = 1000;
      on.state('live');
      if (dropped) on.lagged();
      dropped = false;
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
      if (closed || source !== stream) return;
      dropped = true;
      if (stream.readyState !== EventSource.CLOSED) {
        on.state('reconnecting');
        return;
      }
      on.state('offline');
      void recover(stream);
    });
  };

  /** @param {EventSource} stream the one that was refused */
  const recover = async (stream) => {
    try {
      const session = await request('/dashboard/session', { quiet401: true });
      if (session?.required && !session.authenticated) {
        on.signedOut();
        return;
      }
    } catch {
      // The api is unreachable: try the stream again later.
    }
    if (closed || source !== stream) return;
    retry = setTimeout(open, backoffMs);
    backoffMs = Math.min(backoffMs * 2, RETRY_MAX_MS);
  };

  open();
  return {
    follow: (next) => {
      if (closed || next === queue) return;
      queue = next;
      // A new view has just read what it shows: nothing to catch up on.
      dropped = false;
      clearTimeout(retry);
      source?.close();
      open();
    },
    close: () => {
      closed = true;
      clearTimeout(retry);
      source?.close();
    },
  };
}
