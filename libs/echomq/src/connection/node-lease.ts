import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { RedisUnavailableError } from '../errors';
import { LeasedSnowflakes, MAX_NODE, NodeLeaseLostError, type MintWindow } from '../ids';
import { nodeLeaseKey } from '../keyspace';
import { ReplicatedRenewal } from '../durability/replicated-renewal';
import { RedisCommandRefusedError, type RedisOutOfMemoryError } from '../redis-errors';
import type { RedisClient } from '../scripts';
import { typedOutOfMemory } from '../scripts/reply-errors';
import { FullRedisNotice } from './full-redis-notice';
import { ACQUIRE_LUA, RELEASE_LUA, RENEW_LUA } from './node-lease-scripts';
import { REAL_TIMERS, type LeaseTimers, type NodeLeaseOptions } from './node-lease-options';

export type { LeaseTimers, NodeLeaseOptions } from './node-lease-options';
import { Tenure } from './node-tenure';

/**
 * TTL of `<prefix>:node:<n>`. Short, because a new holder's ids start one window (lease less margin)
 * ahead of the server clock, above anything an unknowing previous holder can still mint.
 */
export const NODE_LEASE_MS = 2_000;
/**
 * How long the module's lease goes without a mint before it is parked (idleParkMs): one renewal
 * with the long PARKED_TTL_MS, then none but a re-park every half of it, so a worker that enqueues
 * nothing costs Redis next to nothing. The next mint renews it as usual first (one round trip),
 * on the same tenure: its ids keep the server's time, where a fresh tenure's would run a window ahead.
 */
export const NODE_LEASE_IDLE_PARK_MS = 10_000;
/**
 * TTL of a parked lease's key. A parked holder mints nothing until a renewal confirms it again,
 * so the long TTL only keeps the node from others; a crashed process's node is free after it.
 */
export const NODE_LEASE_PARKED_TTL_MS = 10 * 60_000;
/** Kept back from each window for clock-rate drift on this host and clock skew between Redis hosts. */
export const NODE_LEASE_MARGIN_MS = 200;
/**
 * While a tenure's floor is still ahead of the server clock, it renews this often, so its
 * ceiling (which only renewals raise) keeps ahead of the ids it mints from the floor.
 */
const RAMP_RENEW_MS = 20;
/** Longest a release at shutdown waits for Redis; the key expires by itself anyway. */
const RELEASE_TIMEOUT_MS = 1_000;
/** What the full-Redis warning of the lease says waits for room. */
const WAITS_FOR_ROOM =
  'No node number is leased until there is room (SET NX grows memory), so this process mints no job ' +
  'ids: its enqueues and schedule upserts fail at once with REDIS_OUT_OF_MEMORY meanwhile; jobs are ' +
  'still claimed and completed, which frees room (a configured nodeId needs no lease)';

/**
 * Leases a Snowflake node number from Redis (`<prefix>:node:<n>`, SET NX with a TTL) and keeps the
 * window in which this process may mint on it. A renewal that finds the key gone or someone
 * else's ends the tenure at once and leases a node again (the same one first); a renewal that
 * fails only leaves the window to close at its local deadline. Why this makes ids unique is
 * written in docs/model.md, "Why ids are unique".
 */
export class NodeLease {
  readonly snowflakes: LeasedSnowflakes;
  private readonly leaseMs: number;
  private readonly windowMs: number;
  private readonly renewEveryMs: number;
  private readonly clock: () => number;
  private readonly timers: LeaseTimers;
  private readonly logger: Pick<Logger, 'warn' | 'error'> & Partial<Pick<Logger, 'log' | 'debug'>>;
  /** Every acquisition a full Redis refuses would warn (one every renewal interval): said once. */
  private readonly fullRedis: FullRedisNotice;
  /**
   * Set while the last acquisition was refused by a full Redis and no node is held: a wait
   * for the lease (ready) then fails at once with it, since only room, not time, ends it.
   */
  private refusedFull?: RedisOutOfMemoryError;
  private readonly listeners = new Set<() => void>();
  private tenure?: Tenure;
  private acquiring?: Promise<void>;
  /** Whether the last renewal failed (no reply): a waiting mint then leaves renewals to the timer. */
  private renewFailed = false;
  /** Parked: idle, renewed with the long TTL only; the next mint's renewal unparks it. */
  private parked = false;
  private renewing?: { readonly tenure: Tenure; readonly sentAt: number; readonly done: Promise<void> };
  private renewTimer?: unknown;
  /** After a loss, the lost node is tried first: taking it back keeps the process's ids on one node. */
  private retakeNode?: number;
  /** When the current tenure was taken (monotonic): its idleness counts from here until a mint. */
  private heldSince = 0;
  private closed = false;
  /** With durable writes: a tenure's renewals until its replicas confirmed it. */
  private readonly replicatedRenewal?: ReplicatedRenewal;
  /**
   * Durable writes whose confirmation Redis refuses for good (a user without +wait): no
   * tenure can open, so a wait for an id fails at once with this rather than timing out.
   */
  private refusal?: RedisCommandRefusedError;

  constructor(
    private readonly redis: RedisClient,
    private readonly options: NodeLeaseOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? NODE_LEASE_MS;
    this.windowMs = this.leaseMs - (options.marginMs ?? NODE_LEASE_MARGIN_MS);
    this.renewEveryMs = options.renewEveryMs ?? this.leaseMs / 4;
    if (!(this.windowMs > this.renewEveryMs && this.renewEveryMs > 0)) {
      throw new RangeError('A node lease needs 0 < renewEveryMs < leaseMs - marginMs');
    }
    this.clock = options.clock ?? (() => performance.now());
    this.timers = options.timers ?? REAL_TIMERS;
    this.logger = options.logger ?? new Logger('EchoMQ');
    this.fullRedis = new FullRedisNotice(this.logger, 'The Snowflake node lease', this.clock);
    this.snowflakes = new LeasedSnowflakes(() => this.tenure, this.clock);
    if (options.durable) this.replicatedRenewal = new ReplicatedRenewal(options.durable, this.logger);
  }

  /** The node held now (it may still be waiting out its first window), or undefined. */
  get node(): number | undefined {
    return this.tenure?.node;
  }

  /** The current window, for inspection; undefined while no node is held. */
  window(): MintWindow | undefined {
    return this.tenure;
  }

  /**
   * Leases a node unless one is held, retrying (every renewal interval) while Redis is
   * unreachable or every node is taken. Resolves once one is held, or when the lease is closed.
   */
  acquire(): Promise<void> {
    if (this.tenure || this.closed) return Promise.resolve();
    this.acquiring ??= this.acquireLoop(this.retakeNode ?? this.options.firstNode).finally(
      () => (this.acquiring = undefined),
    );
    return this.acquiring;
  }

  /** One renewal (the timer runs one every renewEveryMs). At most one is in flight while it can still help. */
  renew(): Promise<void> {
    const tenure = this.tenure;
    if (!tenure || this.closed) return Promise.resolve();
    const pending = this.renewing;
    // A renewal older than the window can no longer extend it: send a fresh one beside it.
    if (pending?.tenure === tenure && this.clock() - pending.sentAt < this.windowMs) return pending.done;
    const sentAt = this.clock();
    const done = this.sendRenewal(tenure, sentAt).finally(() => {
      if (this.renewing?.done === done) this.renewing = undefined;
      // Told once the renewal is no longer in flight, so a waiting mint may ask for the next one.
      this.changed();
    });
    this.renewing = { tenure, sentAt, done };
    return done;
  }

  /**
   * Resolves once an id can be minted; rejects with NodeLeaseLostError after timeoutMs, or
   * with the signal's reason when `signal` aborts first (the wait is then cleaned up). While
   * no node is held because a full Redis refused the last acquisition, it rejects at once with
   * RedisOutOfMemoryError (or as soon as an acquisition is refused so): the wait would only
   * run out its timeout, since room, not time, ends it.
   */
  ready(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.snowflakes.blocker() === undefined) return Promise.resolve();
    // Leased on demand: a process that mints nothing (or gave its node back, idle) holds none.
    void this.acquire();
    const deadline = this.clock() + timeoutMs;
    return new Promise<void>((resolve, reject) => {
      let timer: unknown;
      const stop = (): void => {
        this.timers.clearTimeout(timer);
        this.listeners.delete(check);
        signal?.removeEventListener('abort', aborted);
      };
      const aborted = (): void => {
        stop();
        reject(signal?.reason as Error); // AbortSignal's reason is an Error unless the caller chose otherwise
      };
      const check = (): void => {
        this.timers.clearTimeout(timer);
        const blocker = this.snowflakes.blocker();
        const now = this.clock();
        const full = this.tenure === undefined ? this.refusedFull : undefined;
        const refused = full ?? this.refusal;
        if (blocker === undefined || refused || now >= deadline || this.closed) {
          stop();
          if (blocker === undefined) resolve();
          else reject(refused ?? new NodeLeaseLostError(blocker, this.node));
          return;
        }
        // A window not open yet or used up is lifted by a renewal: ask for one now rather than at
        // the next timer (renew() shares one in flight), so a mint waits a round trip or two.
        // After a failed renewal (Redis not answering) the timer's pace is kept.
        const renewable =
          blocker === 'waiting' || blocker === 'exhausted' || (blocker === 'unconfirmed' && this.parked);
        if (this.tenure && renewable && !this.renewFailed) {
          void this.renew();
        }
        // Look again at the deadline or after a renewal interval; every change of tenure or
        // window (a confirmed renewal opens a new tenure's window) also looks again (listeners).
        const wait = Math.min(deadline - now, this.renewEveryMs);
        timer = this.timers.setTimeout(check, Math.max(1, wait));
      };
      if (signal?.aborted) return aborted();
      signal?.addEventListener('abort', aborted);
      this.listeners.add(check);
      check();
    });
  }

  /** Stops minting at once and gives the node back (compare-and-delete), waiting at most timeoutMs. */
  async release(timeoutMs = RELEASE_TIMEOUT_MS): Promise<void> {
    this.closed = true;
    this.timers.clearTimeout(this.renewTimer);
    const tenure = this.tenure;
    this.tenure = undefined;
    this.changed();
    if (tenure) await this.bounded(this.giveBack(tenure), timeoutMs);
  }

  private async acquireLoop(firstNode: number | undefined): Promise<void> {
    let start = firstNode ?? Math.floor(Math.random() * (MAX_NODE + 1));
    while (!this.closed && !this.tenure) {
      try {
        const taken = await this.tryNodes(start);
        this.roomAgain();
        if (taken) return;
        this.logger.error(
          `All ${MAX_NODE + 1} Snowflake node numbers are leased; retrying. Set nodeId explicitly.`,
        );
      } catch (error) {
        // A full Redis is said once for the episode (FullRedisNotice), and Redis unreachable
        // once, by the connection; the loop just tries again.
        const refused = typedOutOfMemory(error, this.redis, 'SET NX (a Snowflake node lease)');
        if (this.fullRedis.met(refused, WAITS_FOR_ROOM)) {
          this.refusedFull = refused as RedisOutOfMemoryError;
          this.changed();
        } else if (!(error instanceof RedisUnavailableError)) {
          this.logger.warn(`Could not lease a Snowflake node number: ${(error as Error).message}`);
        }
      }
      await new Promise<void>((resolve) => this.timers.setTimeout(resolve, this.renewEveryMs));
      start = Math.floor(Math.random() * (MAX_NODE + 1));
    }
  }

  /** An acquisition got a reply: Redis is not (or no longer) refusing it for room. */
  private roomAgain(): void {
    this.refusedFull = undefined;
    this.fullRedis.cleared();
  }

  /** Tries every node once, from `start`. True when one was taken. */
  private async tryNodes(start: number): Promise<boolean> {
    for (let step = 0; step <= MAX_NODE && !this.closed; step++) {
      const node = (start + step) % (MAX_NODE + 1);
      const token = randomBytes(12).toString('hex');
      const sentAt = this.clock();
      const reply = await this.redis.eval(ACQUIRE_LUA, 1, this.key(node), token, this.leaseMs);
      const [taken, serverMs] = reply as [number, number];
      if (taken !== 1) continue;
      const tenure = new Tenure(
        node,
        token,
        this.windowMs,
        sentAt,
        this.clock(),
        serverMs,
        !!this.options.durable,
      );
      if (this.closed) {
        void this.giveBack(tenure); // released while this acquisition was in flight
        return true;
      }
      this.tenure = tenure;
      this.heldSince = this.clock();
      this.scheduleRenewal();
      this.changed();
      return true;
    }
    return false;
  }

  private async sendRenewal(tenure: Tenure, sentAt: number, ttlMs = this.leaseMs): Promise<void> {
    let reply: unknown;
    try {
      reply = tenure.replicated
        ? await this.redis.eval(RENEW_LUA, 1, this.key(tenure.node), tenure.token, ttlMs)
        : await this.confirmReplicated(tenure);
      if (reply === undefined) {
        this.renewFailed = true; // held but not confirmed by the replicas yet: the timer asks again
        return;
      }
    } catch (error) {
      if (error instanceof RedisCommandRefusedError) {
        // Said once, not at every renewal; renewals go on, so a right granted later is picked up.
        if (!this.refusal)
          this.logger.error(`No id can be minted on Snowflake node ${tenure.node}: ${error.message}`);
        // Its write was the lease's renewal; an enqueue waiting for an id wrote nothing.
        this.refusal = error.beforeWrite();
        this.changed();
        return;
      }
      this.renewFailed = true;
      // Not a loss: the key may well still be ours. The window closes at its deadline unless a
      // later renewal gets through. (Redis unreachable is said once, by the connection.)
      if (!(error instanceof RedisUnavailableError)) {
        this.logger.warn(
          `Could not renew the lease on Snowflake node ${tenure.node}: ${(error as Error).message}`,
        );
      }
      return;
    }
    if (this.tenure !== tenure) return; // lost or released meanwhile: a late reply changes nothing
    this.renewFailed = false;
    const [held, serverMs] = reply as [number, number];
    if (held === 1) {
      tenure.confirm(sentAt, this.clock(), serverMs);
      if (ttlMs === this.leaseMs && this.parked) {
        this.parked = false; // a mint asked: renewals go on at their usual pace
        this.scheduleRenewal();
      }
      this.changed();
      return;
    }
    // Our token is gone and can never come back (no one else writes it): stop minting now.
    this.tenure = undefined;
    this.timers.clearTimeout(this.renewTimer);
    this.changed();
    this.logger.error(
      `Lost the lease on Snowflake node ${tenure.node}; minting paused until a node is leased again`,
    );
    this.retakeNode = tenure.node;
    void this.acquire();
  }

  /**
   * A tenure's first confirmation with durable writes, on the master holding its key (see
   * ReplicatedRenewal). Undefined when the token is held but not yet replicated: like a failed
   * renewal, the window stays shut and the next renewal asks again.
   */
  private async confirmReplicated(tenure: Tenure): Promise<unknown> {
    const key = this.key(tenure.node);
    const renewed = await this.replicatedRenewal!.renew(tenure.node, {
      key,
      append: (pipeline) => pipeline.eval(RENEW_LUA, 1, key, tenure.token, this.leaseMs),
    });
    this.refusal = undefined;
    if (renewed?.replicated && this.tenure === tenure) tenure.replicated = true;
    return renewed?.reply;
  }

  private scheduleRenewal(): void {
    this.timers.clearTimeout(this.renewTimer);
    const tenure = this.tenure;
    // The ramp is for a process minting fast from the floor; an idle one renews at the usual
    // pace, and a mint that finds its window used up asks for a renewal itself (ready).
    const ramping =
      tenure !== undefined &&
      this.clock() + tenure.serverOffsetMs < tenure.floorMs &&
      this.mintedWithin(this.renewEveryMs);
    this.renewTimer = this.timers.setTimeout(
      () => {
        if (!this.tenure || this.closed) return;
        if (this.idleTooLong()) return this.park(this.tenure);
        void this.renew();
        this.scheduleRenewal();
      },
      ramping ? Math.min(RAMP_RENEW_MS, this.renewEveryMs) : this.renewEveryMs,
    );
  }

  /** Whether this process minted an id in the last `ms`. */
  private mintedWithin(ms: number): boolean {
    const last = this.snowflakes.lastMintAt;
    return last !== undefined && this.clock() - last < ms;
  }

  /** Whether the tenure has gone idleParkMs without a mint (counted from when it was taken). */
  private idleTooLong(): boolean {
    const idleMs = this.options.idleParkMs;
    // A durable tenure not confirmed by its replicas yet keeps renewing until it is.
    if (idleMs === undefined || !this.tenure?.replicated) return false;
    const since = Math.max(this.heldSince, this.snowflakes.lastMintAt ?? -Infinity);
    return this.clock() - since >= idleMs;
  }

  /**
   * Parks an idle tenure: one renewal with the parked TTL, then a re-park every half of it while
   * nothing mints. The window closes at its local deadline as after any renewal, so nothing is
   * minted until ready() asks for a usual renewal, which unparks it (see sendRenewal).
   */
  private park(tenure: Tenure): void {
    this.parked = true;
    const parkedTtl = this.options.parkedTtlMs ?? NODE_LEASE_PARKED_TTL_MS;
    void this.sendRenewal(tenure, this.clock(), parkedTtl);
    this.renewTimer = this.timers.setTimeout(() => {
      if (this.parked && this.tenure === tenure && !this.closed) this.park(tenure);
    }, parkedTtl / 2);
  }

  private async giveBack(tenure: Tenure): Promise<void> {
    try {
      await this.redis.eval(RELEASE_LUA, 1, this.key(tenure.node), tenure.token);
    } catch (error) {
      this.logger.warn(`Could not release Snowflake node ${tenure.node}: ${(error as Error).message}`);
    }
  }

  /** The lease key of a node number, under this lease's key prefix. */
  private key(node: number): string {
    return nodeLeaseKey(node, this.options.keyPrefix);
  }

  private bounded(work: Promise<void>, timeoutMs: number): Promise<void> {
    let timer: unknown;
    const timeout = new Promise<void>((resolve) => (timer = this.timers.setTimeout(resolve, timeoutMs)));
    return Promise.race([work, timeout]).finally(() => this.timers.clearTimeout(timer));
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
