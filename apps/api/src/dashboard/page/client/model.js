// @ts-check
/**
 * The shapes the api sends the page (the dashboard contract and the api's job view), for the
 * type checker only: this module exports no code.
 */

/**
 * @typedef {object} Counts
 * @property {number} pending
 * @property {number} active
 * @property {number} schedule
 * @property {number} dead
 */

/**
 * @typedef {object} LaneOverview
 * @property {string} lane
 * @property {number} pending
 * @property {number} active
 * @property {boolean} paused
 * @property {boolean} [held] has work it may not start now (paused, at its cap, rate-limited)
 */

/**
 * @typedef {object} QueueOverview
 * @property {string} queue
 * @property {Counts} counts
 * @property {boolean} paused
 * @property {LaneOverview[]} lanes
 * @property {import('./history.js').Sample[]} history oldest first
 */

/**
 * @typedef {object} Overview
 * @property {number} seq the sample's number in the api process (consecutive samples differ by one)
 * @property {string} at
 * @property {number} refreshMs
 * @property {number} bucketMs the time one history point stands for
 * @property {number} queuesTotal every known queue; `queues` holds at most the first 100 of them by name
 * @property {QueueOverview[]} queues
 */

/**
 * An overview event that follows the one of sample `seq - 1`: each queue carries only its
 * newest history bucket (see overview-merge.js).
 * @typedef {object} OverviewTail
 * @property {true} tail
 * @property {number} seq
 * @property {string} at
 * @property {number} refreshMs
 * @property {number} bucketMs
 * @property {number} queuesTotal
 * @property {(Omit<QueueOverview, 'history'> & { historyTail: import('./history.js').Sample[] })[]} queues
 */

/** @typedef {Overview | OverviewTail} OverviewFrame what an `overview` event carries */

/**
 * One queue as the api's own routes describe it (GET /queues/:q and /queues/:q/lanes), for a
 * queue the overview does not hold.
 * @typedef {object} QueueState
 * @property {Counts} counts
 * @property {boolean} paused
 * @property {LaneOverview[]} lanes
 * @property {number} completed the queue's completed counter, which moves with every completion
 */

/**
 * A job as the api shows it. A completed job whose row has expired is listed from the event
 * stream alone: id, queue, state, finishedAt and maybe result, nothing else.
 * @typedef {object} Job
 * @property {string} id
 * @property {string} queue
 * @property {string} state
 * @property {string} [name]
 * @property {string} [lane]
 * @property {number} [priority]
 * @property {unknown} [data]
 * @property {number} [attempts]
 * @property {number} [maxAttempts]
 * @property {number} [attemptsLeft]
 * @property {string} [enqueuedAt]
 * @property {string} [runAt]
 * @property {string} [leaseDeadline]
 * @property {string} [lastError]
 * @property {string} [lastErrorStack]
 * @property {unknown} [result]
 * @property {string} [finishedAt]
 * @property {unknown} [progress]
 * @property {number} [timeoutMs]
 * @property {string[]} [logs]
 * @property {number} [logsDropped]
 */

/**
 * What every view offers the app: live input, and a way to be taken down.
 * @typedef {object} View
 * @property {(overview: Overview) => void} overview a fresh overview arrived
 * @property {(event: import('./live.js').JobEvent) => void} job something happened to a job
 * @property {() => void} resync events were dropped: read everything again
 * @property {() => void} dispose the view is leaving the page
 */

export {};
