/** The job data every system carries: ~100 bytes of JSON, with the enqueue timestamp in it. */
export interface JobData {
  /** Sequence number within the run. */
  readonly i: number;
  /** wallNow() when the producer called enqueue (0 when nobody measures latency). */
  readonly t: number;
  /** 1 for warm-up jobs, whose latency is not recorded. */
  readonly w?: 1;
  /** Filler that brings the JSON to PAYLOAD_BYTES. */
  readonly s: string;
}

export const PAYLOAD_BYTES = 100;

export function makePayload(i: number, t = 0, warmUp = false): JobData {
  const bare = warmUp ? { i, t, w: 1 as const, s: '' } : { i, t, s: '' };
  const fill = Math.max(0, PAYLOAD_BYTES - JSON.stringify(bare).length);
  return { ...bare, s: 'x'.repeat(fill) };
}

export function makePayloads(count: number, from = 0): JobData[] {
  return Array.from({ length: count }, (_, k) => makePayload(from + k, Date.now()));
}
