// @ts-check
import { request, seg } from './http.js';

/** @typedef {import('./model.js').QueueState} QueueState */

/**
 * A queue the overview does not hold (it lists the first 100 queues by name), read through the
 * api's own routes: GET /queues/:q for its depths, counters and pause flag, GET /queues/:q/lanes
 * for its lanes. At most one read in flight; asking during one reads once more after it, so what
 * is shown never predates the last ask.
 * @param {string} queue
 * @param {(state: QueueState) => void} onState
 * @param {(error: unknown) => void} onError
 */
export function queueStateReader(queue, onState, onError) {
  const base = `/queues/${seg(queue)}`;
  let inFlight = false;
  let again = false;
  let disposed = false;

  const read = async () => {
    inFlight = true;
    again = false;
    try {
      const [detail, lanes] = await Promise.all([request(base), request(`${base}/lanes`)]);
      if (disposed) return;
      onState({
        counts: detail.counts,
        paused: detail.paused,
        completed: Number(detail.metrics?.completed ?? 0),
        lanes: lanes.lanes.map((/** @type {import('./model.js').LaneOverview} */ lane) => ({
          lane: lane.lane,
          pending: lane.pending,
          active: lane.active,
          paused: lane.paused,
          held: lane.held,
        })),
      });
    } catch (error) {
      if (!disposed) onError(error);
    } finally {
      inFlight = false;
      if (again && !disposed) void read();
    }
  };

  return {
    /** Read now, or right after the read in flight. */
    ask: () => {
      if (disposed) return;
      if (inFlight) again = true;
      else void read();
    },
    dispose: () => {
      disposed = true;
    },
  };
}
