// @ts-check
import { SPAN_MS } from './history.js';

/**
 * The stream sends the whole overview once (and again to a page that fell behind), then only
 * the end of each queue's history: a sample changes only its newest bucket. This turns such a
 * tail back into a whole overview, from the one the page holds.
 */

/** @typedef {import('./model.js').Overview} Overview */
/** @typedef {import('./model.js').OverviewFrame} OverviewFrame */
/** @typedef {import('./history.js').Sample} Sample */

/** How many samples a tail covers (the server's TAIL_SAMPLES): the tail holds that many newest buckets. */
const TAIL_SAMPLES = 3;

/**
 * @param {Overview | undefined} previous the overview this page holds
 * @param {OverviewFrame} frame what the stream sent
 * @returns {Overview | 'stale' | 'behind'} the whole overview; `stale` for a frame older than
 *   `previous` (keep it); `behind` when the tail covers fewer samples than the page missed (read
 *   the whole one)
 */
export function mergeOverview(previous, frame) {
  if (previous && frame.seq <= previous.seq) return 'stale';
  if (!('tail' in frame)) return frame;
  if (!previous || frame.seq - previous.seq > TAIL_SAMPLES) return 'behind';
  const before = new Map(previous.queues.map((queue) => [queue.queue, queue.history]));
  const atMs = Date.parse(frame.at);
  return {
    seq: frame.seq,
    at: frame.at,
    refreshMs: frame.refreshMs,
    bucketMs: frame.bucketMs,
    queuesTotal: frame.queuesTotal,
    queues: frame.queues.map(({ historyTail, ...queue }) => ({
      ...queue,
      history: extend(before.get(queue.queue) ?? [], historyTail, atMs, frame.bucketMs),
    })),
  };
}

/**
 * The history the server holds: the page's buckets older than the tail, then the tail (alone
 * when shorter than TAIL_SAMPLES: then it is the whole history), without the buckets that fell
 * out of the span, by the server's own rule (start + bucket width <= sample time - span).
 * @param {Sample[]} history
 * @param {Sample[]} tail
 * @param {number} atMs
 * @param {number} bucketMs
 */
function extend(history, tail, atMs, bucketMs) {
  const first = tail[0];
  const kept =
    first === undefined || tail.length < TAIL_SAMPLES
      ? []
      : history.filter((point) => Date.parse(point.at) < Date.parse(first.at));
  return [...kept, ...tail].filter((point) => Date.parse(point.at) + bucketMs > atMs - SPAN_MS);
}
