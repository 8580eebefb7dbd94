/** The wire shapes of GET /dashboard/api/overview and of the `overview` server-sent event. */

export interface QueueDepths {
  readonly pending: number;
  readonly active: number;
  readonly schedule: number;
  readonly dead: number;
}

export interface LaneDepth {
  readonly lane: string;
  readonly pending: number;
  readonly active: number;
  readonly paused: boolean;
  /** Has work it may not start now (paused, at its cap, rate-limited or throttled). */
  readonly held: boolean;
}

/** What the queue's transition counters moved by within one bucket of time. */
export interface HistoryPoint {
  /** The bucket's start (ISO 8601, the api's clock). */
  readonly at: string;
  readonly enqueued: number;
  readonly completed: number;
  /** Failed attempts that will be retried. */
  readonly failed: number;
  /** Jobs that went to dead (attempts spent, unrecoverable, or reaped with none left). */
  readonly dead: number;
}

export interface QueueOverview {
  readonly queue: string;
  readonly counts: QueueDepths;
  readonly paused: boolean;
  readonly lanes: LaneDepth[];
  /** Oldest first, at most HISTORY_SPAN_MS back; only buckets in which the server sampled. */
  readonly history: HistoryPoint[];
}

export interface Overview {
  /** The sample's number in this api process: consecutive samples differ by one. */
  readonly seq: number;
  /** When this overview was read (ISO 8601, the api's clock). */
  readonly at: string;
  readonly refreshMs: number;
  /** The width of one history point. */
  readonly bucketMs: number;
  /** Queues known to the registry; `queues` holds the first OVERVIEW_QUEUES_MAX of them by name. */
  readonly queuesTotal: number;
  readonly queues: QueueOverview[];
}

/** A queue in a tail frame: the end of its history instead of the whole of it. */
export interface QueueOverviewTail extends Omit<QueueOverview, 'history'> {
  /** The newest TAIL_SAMPLES buckets, oldest first; fewer means this is the whole history. */
  readonly historyTail: HistoryPoint[];
}

/**
 * An `overview` event for a page that holds sample `seq - TAIL_SAMPLES` or later: the same
 * fields, but each queue carries only `historyTail`. A sample changes only its newest bucket, so
 * older ones are as the page has them: it keeps its buckets older than the tail's first, appends
 * the tail (or takes the tail alone when it is shorter than TAIL_SAMPLES), and drops buckets that
 * fell out of the span (start + bucketMs <= at - 15 minutes), as the server does.
 */
export interface OverviewTail extends Omit<Overview, 'queues'> {
  readonly tail: true;
  readonly queues: QueueOverviewTail[];
}
