/**
 * The params both failover scenarios (Sentinel and cluster) take: they run the same phases
 * (failover-phase.ts) and differ only in how many jobs a full run enqueues and in the name of
 * the timeout within which nobody takes the stopped replica for failed.
 */
export function failoverParams(fullJobs: number, downAfter: string) {
  return {
    jobs: { full: fullJobs, quick: 2_000, doc: 'jobs enqueued per phase (plain, then durable)' },
    perSecond: { full: 2_000, quick: 800, doc: 'enqueue rate' },
    workers: { full: 3, quick: 2, doc: 'worker processes' },
    killAt: {
      full: 6_000,
      quick: 1_000,
      doc: 'the master is SIGKILLed once this many enqueues are acknowledged',
    },
    lagMs: {
      full: 500,
      quick: 300,
      doc: `how far the replica is behind when the master dies: writes of that span reach only the master (under the 1 s ${downAfter})`,
    },
    leaseMs: { full: 3_000, quick: 2_000, doc: "the processor's lease" },
    workMs: {
      full: 50,
      quick: 100,
      doc: 'each handler sleeps this long: the workers (20 slots each) fall behind the producer, so jobs wait in pending and claims at the kill take jobs the replica already has',
    },
  };
}
