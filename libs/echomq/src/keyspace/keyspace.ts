import { InvalidArgumentError, InvalidJobIdError } from '../errors';
import { isJobId, type JobId } from '../ids';
import { assertKeyPrefix, DEFAULT_KEY_PREFIX } from './key-prefix';
import { assertLaneName, assertPriority, DEFAULT_LANE, DEFAULT_PRIORITY } from './lane-name';
import { assertPhysicalQueueName } from './partition-name';

/**
 * The only place keys are composed. `<p>` is the module's keyPrefix (default `emq`):
 *
 *   <p>:{q}:pending | active | schedule | dead     the four state sets; pending is the default
 *                                                  lane's at priority 0
 *   <p>:{q}:pending:<level>:<lane>                 pending of any other lane and priority level
 *                                                  (each counts as pending: invariant 1)
 *   <p>:{q}:ready:<level>                          lanes with claimable work at a level (zset,
 *                                                  score = the lane's pass, see docs/flow-control.md)
 *   <p>:{q}:vtime                                  per level, the pass of the lane served last (hash)
 *   <p>:{q}:held                                   lanes held back (cap, rate, pause) -> the levels
 *                                                  where they have pending work (hash)
 *   <p>:{q}:lane-timers                            rate-held lanes -> when their window opens (zset)
 *   <p>:{q}:lane-holds                             throttled lanes (RateLimitedError) -> until when (zset)
 *   <p>:{q}:lanes-paused                           paused lanes (set)
 *   <p>:{q}:lane-active                            lane -> jobs of it in active (hash; the default
 *                                                  lane's only once the queue has the flow mark)
 *   <p>:{q}:lane:<lane>                            a lane's own settings: weight, concurrency (hash)
 *   <p>:{q}:lanes-configured                       the lanes that have own settings (set)
 *   <p>:{q}:flow                                   present once the queue used a limit, a lane
 *                                                  setting or pause, a throttle or a priority
 *                                                  above 0: the claim's shortcut is off (string)
 *   <p>:{q}:lane-rate:<lane>                       a lane's starts per slice of its rate window (hash)
 *   <p>:{q}:rate                                   the queue's starts per slice of its rate window (hash)
 *   <p>:{q}:hold                                   the queue held back until it expires (string, PX)
 *   <p>:{q}:settings                               limits every worker enforces (hash)
 *   <p>:{q}:waiting                                a claim was held back by a cap: the next freed
 *                                                  slot wakes a worker (string)
 *   <p>:{q}:job:<id>                               a job's row (hash)
 *   <p>:{q}:metrics                                transition counters (hash)
 *   <p>:{q}:events                                 transition events (stream)
 *   <p>:{q}:wake                                   wake tokens for idle workers (list)
 *   <p>:{q}:paused                                 pause flag (string)
 *   <p>:{q}:format                                 the queue's data-format version (string)
 *   <p>:{q}:idem:<key>                             idempotency key -> job id
 *   <p>:{q}:debounce:<key>                         debounce key -> the waiting job it replaces (PX)
 *   <p>:{q}:once:<key>                             throttle key -> the job of its window (PX)
 *   <p>:{q}:schedulers                             schedule key -> its definition (hash, JSON)
 *   <p>:{q}:scheduler-next                         schedule key -> the id of its next occurrence (hash)
 *   <p>:{q}:cancels                                ids of removed active jobs, for the workers that
 *                                                  run them (stream, capped)
 *   <p>:{q}:reply:<request id>                     a write call's recorded reply (replay window)
 *   <p>:{q}:fence                                  never exists (see QueueKeys.fence)
 *   <p>:queues                                     registry of queue names, partitions by their
 *                                                  own names `q#k` (outside any queue's slot)
 *   <p>:partitions                                 queue -> its partition count, and `q#max` -> the
 *                                                  most it ever had (hash, outside any queue's slot)
 *   <p>:node:<n>                                   Snowflake node-number leases
 *
 * `{q}` is a cluster hashtag: every key of one queue hashes to one slot, so one
 * Lua script can move a job between sets atomically, even on Redis Cluster. Every
 * key starts with `<p>:`, so one ACL pattern `~<p>:*` covers an application's keys.
 * A partitioned queue's partitions are queues of their own here: `{q#0}`, `{q#1}`, ...
 * (keyspace/partition-name.ts), each on its own slot.
 */

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
  /** The data-format version the queue's rows and sets are written in (see queue/data-format.ts). */
  readonly format: string;
  readonly vtime: string;
  readonly held: string;
  readonly laneTimers: string;
  readonly laneHolds: string;
  readonly configuredLanes: string;
  readonly flow: string;
  readonly pausedLanes: string;
  readonly laneActive: string;
  readonly settings: string;
  readonly rate: string;
  readonly hold: string;
  readonly waiting: string;
  readonly schedulers: string;
  readonly schedulerNext: string;
  readonly cancels: string;
  /** Prefix of row keys; scripts append ids they read from this queue's own sets. */
  readonly jobPrefix: string;
  /** Prefix of debounce keys (see debounce()). */
  readonly debouncePrefix: string;
  /** Prefix of throttle keys (see throttleKey()). */
  readonly throttlePrefix: string;
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

  constructor(
    readonly queue: string,
    readonly prefix: string = DEFAULT_KEY_PREFIX,
  ) {
    assertPhysicalQueueName(queue);
    assertKeyPrefix(prefix);
    this.base = `${prefix}:{${queue}}:`;
    this.pending = `${this.base}pending`;
    this.active = `${this.base}active`;
    this.schedule = `${this.base}schedule`;
    this.dead = `${this.base}dead`;
    this.metrics = `${this.base}metrics`;
    this.events = `${this.base}events`;
    this.wake = `${this.base}wake`;
    this.paused = `${this.base}paused`;
    this.format = `${this.base}format`;
    this.vtime = `${this.base}vtime`;
    this.held = `${this.base}held`;
    this.laneTimers = `${this.base}lane-timers`;
    this.laneHolds = `${this.base}lane-holds`;
    this.configuredLanes = `${this.base}lanes-configured`;
    this.flow = `${this.base}flow`;
    this.pausedLanes = `${this.base}lanes-paused`;
    this.laneActive = `${this.base}lane-active`;
    this.settings = `${this.base}settings`;
    this.rate = `${this.base}rate`;
    this.hold = `${this.base}hold`;
    this.waiting = `${this.base}waiting`;
    this.schedulers = `${this.base}schedulers`;
    this.schedulerNext = `${this.base}scheduler-next`;
    this.cancels = `${this.base}cancels`;
    this.jobPrefix = `${this.base}job:`;
    this.debouncePrefix = `${this.base}debounce:`;
    this.throttlePrefix = `${this.base}once:`;
    this.idempotencyPrefix = `${this.base}idem:`;
    this.fence = `${this.base}fence`;
  }

  set(state: StateSet): string {
    return this[state];
  }

  /**
   * The pending set of one lane at one priority level. The default lane at level 0 is the
   * queue's plain `pending`, so a queue that uses neither lanes nor priorities is laid out
   * as before they existed. (Scripts compose the same names from the queue's base: see
   * pending_key in scripts/lua/flow.ts; a unit test keeps the two equal.)
   */
  pendingOf(lane: string = DEFAULT_LANE, priority: number = DEFAULT_PRIORITY): string {
    assertLaneName(lane);
    assertPriority(priority);
    if (lane === DEFAULT_LANE && priority === DEFAULT_PRIORITY) return this.pending;
    return `${this.base}pending:${priority}:${lane}`;
  }

  /** The lanes with claimable work at one priority level. */
  ready(priority: number): string {
    return `${this.base}ready:${assertPriority(priority)}`;
  }

  /** A lane's own settings (weight, concurrency), written by an admin call. */
  laneSettings(lane: string): string {
    return `${this.base}lane:${assertLaneName(lane)}`;
  }

  /** A lane's starts per slice of its rate window. */
  laneRate(lane: string): string {
    return `${this.base}lane-rate:${assertLaneName(lane)}`;
  }

  /** The row key; the id is gated first, so a malformed id never reaches the wire. */
  job(id: string): string {
    return this.jobPrefix + assertJobId(id);
  }

  idempotency(key: string): string {
    return this.idempotencyPrefix + assertIdempotencyKey(key);
  }

  /** A debounce key: the waiting job that later enqueues with the key replace. */
  debounce(key: string): string {
    return this.debouncePrefix + assertIdempotencyKey(key);
  }

  /** A throttle key: the one job its window admits. */
  throttleKey(key: string): string {
    return this.throttlePrefix + assertIdempotencyKey(key);
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

/** Instances are immutable, so they are cached: by prefix, then queue name (bounded). */
const cache = new Map<string, Map<string, QueueKeys>>();
let cached = 0;
const CACHE_MAX = 10_000;

/** Keys of one queue under one prefix; validates both. */
export function queueKeys(queue: string, prefix: string = DEFAULT_KEY_PREFIX): QueueKeys {
  let keys = cache.get(prefix)?.get(queue);
  if (!keys) {
    keys = new QueueKeys(queue, prefix);
    if (cached < CACHE_MAX) {
      let byQueue = cache.get(prefix);
      if (!byQueue) cache.set(prefix, (byQueue = new Map<string, QueueKeys>()));
      byQueue.set(queue, keys);
      cached++;
    }
  }
  return keys;
}

/** The registry of known queue names under a prefix, read by reapers and tools. */
export function queueRegistryKey(prefix: string = DEFAULT_KEY_PREFIX): string {
  return `${assertKeyPrefix(prefix)}:queues`;
}

/** Partition counts of partitioned queues (see queue/partitions/partition-directory.ts). */
export function partitionRegistryKey(prefix: string = DEFAULT_KEY_PREFIX): string {
  return `${assertKeyPrefix(prefix)}:partitions`;
}

/** The registry under the default prefix (tests and tools that use the default). */
export const QUEUE_REGISTRY_KEY = queueRegistryKey(DEFAULT_KEY_PREFIX);

export function nodeLeaseKey(node: number, prefix: string = DEFAULT_KEY_PREFIX): string {
  if (!Number.isInteger(node) || node < 0) throw new InvalidArgumentError(`Invalid node number ${node}`);
  return `${assertKeyPrefix(prefix)}:node:${node}`;
}
