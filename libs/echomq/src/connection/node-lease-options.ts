import type { Logger } from '@nestjs/common';
import type { ReplicaWait } from '../durability/replica-confirmer';

/** Timers the lease runs on; injected so tests drive time instead of sleeping. */
export interface LeaseTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const REAL_TIMERS: LeaseTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface NodeLeaseOptions {
  readonly leaseMs?: number;
  readonly marginMs?: number;
  /** Default leaseMs / 4, so a healthy process renews several times inside each window. */
  readonly renewEveryMs?: number;
  /** The node tried first (otherwise a random one); after a loss, the lost node is tried first. */
  readonly firstNode?: number;
  /** Monotonic milliseconds; performance.now by default. Never the wall clock. */
  readonly clock?: () => number;
  readonly timers?: LeaseTimers;
  readonly logger?: Pick<Logger, 'warn' | 'error'> & Partial<Pick<Logger, 'log' | 'debug'>>;
  /** The module's keyPrefix: node numbers are leased among the processes sharing it. Default 'emq'. */
  readonly keyPrefix?: string;
  /**
   * Durable writes (module option `durable`): a tenure's window opens only with a renewal that
   * its replicas confirmed (WAIT), so a failover cannot bring back an older holder's token.
   */
  readonly durable?: ReplicaWait;
  /**
   * A tenure that minted nothing for this long is parked: renewed once with parkedTtlMs, then only
   * every half of that, until the next mint renews it as usual. Unset: renewed every renewEveryMs
   * while the process runs. A process that rarely mints (a worker) then costs Redis no renewals.
   */
  readonly idleParkMs?: number;
  /** The TTL of a parked tenure's key (default NODE_LEASE_PARKED_TTL_MS, 10 minutes). */
  readonly parkedTtlMs?: number;
}
