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
 * @property {string} at
 * @property {number} refreshMs
 * @property {number} [bucketMs] the time one history point stands for
 * @property {number} [queuesTotal] every known queue; `queues` may hold only the first of them
 * @property {QueueOverview[]} queues
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
