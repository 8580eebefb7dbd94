import { InvalidArgumentError, InvalidJobIdError } from '../errors';
import { isJobId, type JobId } from '../ids';
import { assertQueueName } from './queue-name';

/**
 * The only place keys are composed.
 *
 *   emq:{q}:pending | active | schedule | dead     the four state sets
 *   emq:{q}:job:<id>                               a job's row (hash)
 *   emq:{q}:metrics                                transition counters (hash)
 *   emq:{q}:events                                 transition events (stream)
 *   emq:{q}:wake                                   wake tokens for idle workers (list)
 *   emq:{q}:paused                                 pause flag (string)
 *   emq:{q}:idem:<key>                             idempotency key -> job id
 *   emq:{q}:reply:<request id>                     a write call's recorded reply (replay window)
 *   emq:{q}:fence                                  never exists (see QueueKeys.fence)
 *   emq:queues                                     registry of queue names (outside any queue's slot)
 *   emq:node:<n>                                   Snowflake node-number leases
 *
 * `{q}` is a cluster hashtag: every key of one queue hashes to one slot, so one
 * Lua script can move a job between sets atomically, even on Redis Cluster.
 */
export const KEY_PREFIX = 'emq';

export const STATE_SETS = ['pending', 'active', 'schedule', 'dead'] as const;
export type StateSet = (typeof STATE_SETS)[number];

const IDEMPOTENCY_KEY_MAX = 256;
const REQUEST_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;

export class QueueKeys {
  readonly base: string;
  readonly pending: string;
  readonly active: string;
  readonly schedule: string;
  readonly dead: string;
  readonly metrics: string;
  readonly events: string;
  readonly wake: string;
  readonly paused: string;
  /** Prefix of row keys; scripts append ids they read from this queue's own sets. */
  readonly jobPrefix: string;
  /** Prefix of idempotency keys; scripts append keys validated here. */
  readonly idempotencyPrefix: string;
  /**
   * A key that never exists, declared by every script. Redis Cluster refuses (TRYAGAIN) a
   * script whose declared keys are partly missing while its slot migrates, so no script
   * ever runs against a queue whose keys are split between two nodes: rows, which scripts
   * reach by id without declaring them, may already have moved. A migration delays
   * scripts (the client repeats the refused call) instead of half-applying them.
   */
  readonly fence: string;

  constructor(readonly queue: string) {
    assertQueueName(queue);
    this.base = `${KEY_PREFIX}:{${queue}}:`;
    this.pending = `${this.base}pending`;
    this.active = `${this.base}active`;
    this.schedule = `${this.base}schedule`;
    this.dead = `${this.base}dead`;
    this.metrics = `${this.base}metrics`;
    this.events = `${this.base}events`;
    this.wake = `${this.base}wake`;
    this.paused = `${this.base}paused`;
    this.jobPrefix = `${this.base}job:`;
    this.idempotencyPrefix = `${this.base}idem:`;
    this.fence = `${this.base}fence`;
  }

  set(state: StateSet): string {
    return this[state];
  }

  /** The row key; the id is gated first, so a malformed id never reaches the wire. */
  job(id: string): string {
    return this.jobPrefix + assertJobId(id);
  }

  idempotency(key: string): string {
    return this.idempotencyPrefix + assertIdempotencyKey(key);
  }

  /** Where a write call records its reply, so a repeat of the same request returns it. */
  reply(requestId: string): string {
    return `${this.base}reply:${assertRequestId(requestId)}`;
  }
}

export function assertJobId(id: unknown): JobId {
  if (!isJobId(id)) throw new InvalidJobIdError(id);
  return id;
}

/** Request ids (and claimant prefixes, which are request ids) go into keys: a fixed alphabet. */
export function assertRequestId(id: unknown): string {
  if (typeof id !== 'string' || !REQUEST_ID_PATTERN.test(id)) {
    throw new InvalidArgumentError('A request id is 1 to 64 characters from A-Z a-z 0-9 _ . : -');
  }
  return id;
}

export function assertIdempotencyKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX) {
    throw new InvalidArgumentError(
      `An idempotency key is a string of 1 to ${IDEMPOTENCY_KEY_MAX} characters`,
    );
  }
  return key;
}

const cache = new Map<string, QueueKeys>();

/** Keys of one queue; validates the name. Instances are cached because they are immutable. */
export function queueKeys(queue: string): QueueKeys {
  let keys = cache.get(queue);
  if (!keys) {
    keys = new QueueKeys(queue);
    if (cache.size < 10_000) cache.set(queue, keys);
  }
  return keys;
}

/** The registry of known queue names, read by reapers and tools. */
export const QUEUE_REGISTRY_KEY = `${KEY_PREFIX}:queues`;

export function nodeLeaseKey(node: number): string {
  if (!Number.isInteger(node) || node < 0) throw new InvalidArgumentError(`Invalid node number ${node}`);
  return `${KEY_PREFIX}:node:${node}`;
}
