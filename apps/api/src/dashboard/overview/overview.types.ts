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
  /** When this overview was read (ISO 8601, the api's clock). */
  readonly at: string;
  readonly refreshMs: number;
  /** The width of one history point. */
  readonly bucketMs: number;
  /** Queues known to the registry; `queues` holds the first OVERVIEW_QUEUES_MAX of them by name. */
  readonly queuesTotal: number;
  readonly queues: QueueOverview[];
}
