/**
 * Milliseconds on this process's monotonic clock, for local deadlines only: how long to keep
 * repeating a call, when a lease estimated locally runs out, when a grace period ends. A wall
 * clock stepped by NTP or by hand would abort healthy jobs (a step forward) or let a handler
 * outlive its lease (a step back); this one only moves forward, at the machine's rate. Its
 * values mean nothing outside this process and are never sent to Redis.
 */
export function monotonicMs(): number {
  return performance.now();
}
