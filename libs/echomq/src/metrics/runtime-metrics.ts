import { Counter, Histogram, type Registry } from 'prom-client';
import { logicalQueueOf } from '../keyspace';
import type { RuntimeHooks, SettledOutcome } from '../observability/runtime-hooks';
import type { ClaimedJobRecord } from '../scripts/claim';

/** Seconds: from a few milliseconds to five minutes, since handlers range from echoes to reports. */
const HANDLER_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** One (queue, outcome) of the settlements: its labels, built once, and the settlements not yet on the counter. */
interface SettledCell {
  readonly labels: { readonly queue: string; readonly outcome: SettledOutcome };
  pending: number;
}

/** Seconds: a claim is one round trip (sub-millisecond on loopback) unless it is repeated or confirmed. */
const CLAIM_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * This process's own worker runtime, as Prometheus metrics: what its claim loops claimed and how
 * long each claim took, how long handlers ran and how each settlement ended (STALE included),
 * and the expired leases its reaper took back. Registered as an observer of the runtime
 * (RuntimeHooksRegistry); it only counts, so it never delays a job. Labels are the queue and
 * a closed set of words, never a job id. A partitioned queue's partitions count under the
 * queue's own name (`emails`, not `emails#2`), as its Redis-derived metrics do.
 */
export class RuntimeMetrics implements RuntimeHooks {
  private readonly claimDuration: Histogram<'queue'>;
  private readonly claimedJobs: Counter<'queue'>;
  private readonly handlerDuration: Histogram<'queue' | 'outcome'>;
  private readonly reapedLeases: Counter<'queue' | 'to'>;
  /**
   * Settlements come once per job (tens of thousands a second in a drain), scrapes every few
   * seconds: each settlement adds 1 to its cell, and the cells reach the counter when it is read
   * (its collect). Keyed by physical queue, then outcome: bounded by the queues served here.
   */
  private readonly settledCells = new Map<string, Map<SettledOutcome, SettledCell>>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.claimDuration = new Histogram({
      name: 'echomq_claim_duration_seconds',
      help: "Round trip of this process's claim calls, from the first send until the jobs are handed over (repeats included)",
      labelNames: ['queue'],
      buckets: CLAIM_BUCKETS,
      registers,
    });
    this.claimedJobs = new Counter({
      name: 'echomq_jobs_claimed_total',
      help: 'Jobs claimed by this process',
      labelNames: ['queue'],
      registers,
    });
    this.handlerDuration = new Histogram({
      name: 'echomq_handler_duration_seconds',
      help: "How long this process's handlers ran, until they returned, threw or timed out, by how the job's settlement ended",
      labelNames: ['queue', 'outcome'],
      buckets: HANDLER_BUCKETS,
      registers,
    });
    const cells = this.settledCells;
    // (read from the cells at each scrape: see settledCells)
    new Counter({
      name: 'echomq_settlements_total',
      help: "This process's settlements of claimed jobs by outcome: completed, retried, dead, stale (the lease had been lost), throttled, released, unknown",
      labelNames: ['queue', 'outcome'],
      registers,
      collect() {
        for (const byOutcome of cells.values()) {
          for (const cell of byOutcome.values()) {
            if (cell.pending > 0) this.inc(cell.labels, cell.pending);
            cell.pending = 0;
          }
        }
      },
    });
    this.reapedLeases = new Counter({
      name: 'echomq_reaped_leases_total',
      help: "Expired leases this process's reaper took back, to pending (attempts left) or to dead",
      labelNames: ['queue', 'to'],
      registers,
    });
  }

  claimed(physical: string, jobs: readonly ClaimedJobRecord[], roundTripMs: number): void {
    const queue = logicalQueueOf(physical);
    this.claimDuration.observe({ queue }, roundTripMs / 1_000);
    if (jobs.length > 0) this.claimedJobs.inc({ queue }, jobs.length);
  }

  settled(physical: string, _record: ClaimedJobRecord, outcome: SettledOutcome, handlerMs?: number): void {
    const cell = this.cellOf(physical, outcome);
    cell.pending += 1;
    if (handlerMs !== undefined) this.handlerDuration.observe(cell.labels, handlerMs / 1_000);
  }

  private cellOf(physical: string, outcome: SettledOutcome): SettledCell {
    let byOutcome = this.settledCells.get(physical);
    if (!byOutcome) {
      byOutcome = new Map();
      this.settledCells.set(physical, byOutcome);
    }
    let cell = byOutcome.get(outcome);
    if (!cell) {
      cell = { labels: { queue: logicalQueueOf(physical), outcome }, pending: 0 };
      byOutcome.set(outcome, cell);
    }
    return cell;
  }

  /** What one reap call of this process's reaper moved. */
  reaped(physical: string, toPending: number, toDead: number): void {
    const queue = logicalQueueOf(physical);
    if (toPending > 0) this.reapedLeases.inc({ queue, to: 'pending' }, toPending);
    if (toDead > 0) this.reapedLeases.inc({ queue, to: 'dead' }, toDead);
  }
}
