import { Cluster } from 'ioredis';
import type { RedisClient } from '../scripts';
import { redisTarget } from '../scripts/reply-errors';
import { monotonicMs } from '../monotonic';

/** An error reply from the server itself (NOPERM, unknown command), as opposed to a lost connection. */
export function isServerRefusal(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}

/** How long a refusal stands before the next caller has the server checked again. */
export const RECHECK_REFUSED_MS = 10_000;

/**
 * A check of the server, made on every connection of the command client as soon as it is up:
 * a reconnect may reach another server (a failover, a restart on another binary or another
 * configuration). Callers await verified() before they first use a queue (QueueRegistration).
 *
 * A verdict that refuses the server (`refuses`) is answered at once to every caller, and
 * `refused` says so without a round trip, so a caller can ask on each use. It is not for
 * ever: once it is `recheckRefusedMs` old the next verified() checks the server again, so a
 * setting fixed at runtime (CONFIG SET) lifts it without a new connection. A check that
 * failed any other way (a lost reply, Redis unreachable) is asked again by the next caller, so
 * a Redis that is down delays the verdict, never fixes it: an application started before its
 * Redis still boots (its registration is retried in the background). On a cluster every master
 * is checked.
 */
export abstract class ConnectionCheck {
  private verdict?: Promise<void>;
  /** A check asked for before the connection was up: the 'ready' that follows sends it. */
  private awaitingReady = false;
  /** The refusal the last finished check came to, until a check passes. */
  private refusal?: unknown;
  /** When that refusal was found (monotonic ms). */
  private refusedAt = 0;

  protected constructor(
    private readonly client: RedisClient,
    /** How long a refusal stands before the next verified() checks the server again. */
    protected readonly recheckRefusedMs = RECHECK_REFUSED_MS,
  ) {
    client.on('ready', () => {
      if (!this.awaitingReady) void this.start();
      this.awaitingReady = false;
    });
  }

  /** Whether the last finished check refused the server (and no check passed since). */
  get refused(): boolean {
    return this.refusal !== undefined;
  }

  /** Resolves once the server passed, or the check cannot tell; rejects with the check's refusal. */
  verified(): Promise<void> {
    const stale = this.refused && monotonicMs() - this.refusedAt >= this.recheckRefusedMs;
    if (this.verdict && !stale) return this.verdict;
    this.awaitingReady = this.client.status !== 'ready';
    return this.start();
  }

  /** Checks one server (a master, on a cluster); `target` names it in logs and errors. */
  protected abstract checkNode(node: RedisClient, target: string): Promise<void>;

  /** Whether `error` is this check's refusal of the server (see `refused`). */
  protected abstract refuses(error: unknown): boolean;

  private start(): Promise<void> {
    const run = this.run();
    this.verdict = run;
    run.then(
      () => {
        if (this.verdict === run) this.refusal = undefined;
      },
      (error: unknown) => {
        if (this.verdict !== run) return;
        if (!this.refuses(error)) {
          this.verdict = undefined;
          return;
        }
        this.refusal = error;
        this.refusedAt = monotonicMs();
      },
    );
    return run;
  }

  private async run(): Promise<void> {
    if (this.client instanceof Cluster && this.client.status !== 'ready') {
      // Before the cluster is ready its node list is empty, and a check over no node would
      // pass: wait for it, as the cluster's own commands wait in its offline queue.
      const cluster = this.client;
      await new Promise<void>((resolve) => cluster.once('ready', () => resolve()));
    }
    const nodes = this.client instanceof Cluster ? this.client.nodes('master') : [this.client];
    await Promise.all(nodes.map((node) => this.checkNode(node, redisTarget(node))));
  }
}
