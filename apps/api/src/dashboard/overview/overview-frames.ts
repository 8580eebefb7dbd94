import { TAIL_SAMPLES, type OverviewFrames } from '../events/sse-stream';
import type { Overview, OverviewTail } from './overview.types';

/**
 * An overview serialised both ways, once per sample for every page: whole (a stream's first
 * overview, and for a page more than TAIL_SAMPLES samples behind) and as its tail (each queue's
 * newest TAIL_SAMPLES buckets). One history point is about 80 bytes, so with 100 queues and 60
 * points each the whole form is about 0.5 MB and the tail about 25 KB.
 */
export function overviewFrames(overview: Overview): OverviewFrames {
  const tail: OverviewTail = {
    ...overview,
    tail: true,
    queues: overview.queues.map(({ history, ...queue }) => ({
      ...queue,
      historyTail: history.slice(-TAIL_SAMPLES),
    })),
  };
  return { seq: overview.seq, json: JSON.stringify(overview), tailJson: JSON.stringify(tail) };
}
