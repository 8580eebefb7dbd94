import { EchoMqError } from './errors';

/**
 * Redis is at its `maxmemory` and, with `maxmemory-policy noeviction`, refuses writes that
 * would grow it. The script that met the refusal had written nothing (Redis refuses a
 * script's first growing write, never one after it), so nothing was written and the call
 * can be repeated once workers have processed jobs and freed room (docs/reliability.md).
 */
export class RedisOutOfMemoryError extends EchoMqError {
  constructor(
    readonly target: string,
    readonly command: string,
  ) {
    super(
      'REDIS_OUT_OF_MEMORY',
      `Redis at ${target} is out of memory (maxmemory reached, noeviction) and refused ${command}; ` +
        'nothing was written. Processing jobs frees room; or raise maxmemory',
    );
  }
}

/**
 * The application asked to be refused a Redis that may evict keys (`requireNoEviction`),
 * and this one's `maxmemory-policy` is not `noeviction`: eviction deletes job rows and state
 * sets without a word, so this process neither serves nor enqueues. Nothing was written.
 */
export class EvictionPolicyError extends EchoMqError {
  constructor(
    readonly target: string,
    readonly policy: string,
  ) {
    super(
      'REDIS_EVICTION_POLICY',
      `Redis at ${target} has maxmemory-policy ${policy}: it may evict jobs. Set maxmemory-policy noeviction ` +
        '(requireNoEviction is on); nothing was written',
    );
  }
}

/**
 * A durable write (the module option `durable`) reached the master but fewer replicas than
 * required acknowledged it within the timeout: it is written, and it may be lost if the
 * master fails before its replicas catch up. For an enqueue, `ids` are the jobs written;
 * repeating the call with the same idempotency key is safe, without one it enqueues again.
 */
export class NotReplicatedError extends EchoMqError {
  constructor(
    readonly acknowledged: number,
    readonly required: number,
    readonly timeoutMs: number,
    readonly ids: readonly string[] = [],
  ) {
    super(
      'NOT_REPLICATED',
      `Only ${acknowledged} of ${required} replicas acknowledged the write within ${timeoutMs} ms: it is on the ` +
        'master and may be lost in a failover',
    );
  }
}

/**
 * Redis refused a command EchoMQ sends for a feature the application turned on: the Redis
 * user lacks the right (an ACL `NOPERM`), or the server does not offer the command at all
 * (renamed away, or a proxy that does not pass it). No repeat can mend that, so it is not
 * retried: grant `right` in the user's ACL line (docs/upgrading.md, "An ACL user scoped to one
 * prefix"), or turn the feature off. When `written` is true the refused command came after a
 * write that is on the master, unconfirmed (a durable write's confirmation); `ids` are the
 * jobs that write made.
 */
export class RedisCommandRefusedError extends EchoMqError {
  constructor(
    readonly target: string,
    /** The refused command, upper case (`WAIT`). */
    readonly command: string,
    /** The ACL right that allows it (`+wait`). */
    readonly right: string,
    /** What needs it, as the message names it ('the module option durable'). */
    readonly feature: string,
    /** Redis's own reply, which says why. */
    readonly reply: string,
    readonly written = false,
    readonly ids: readonly string[] = [],
  ) {
    super(
      'REDIS_COMMAND_REFUSED',
      `Redis at ${target} refused ${command} (${reply}): ${feature} needs ${right} in the Redis user's ACL ` +
        `line (docs/upgrading.md, ${right === '+wait' ? '"Optional additions"' : '"An ACL user scoped to one prefix"'}) ` +
        'on a server that offers the command; not retried' +
        (written ? '. The write is on the master, not confirmed by its replicas' : ''),
    );
  }

  /** The same refusal, as a caller that wrote nothing meets it (an enqueue that minted no id). */
  beforeWrite(): RedisCommandRefusedError {
    return new RedisCommandRefusedError(this.target, this.command, this.right, this.feature, this.reply);
  }

  /** The same refusal, met after a write whose jobs are `ids` (on the master, unconfirmed). */
  afterWrite(ids: readonly string[]): RedisCommandRefusedError {
    return new RedisCommandRefusedError(
      this.target,
      this.command,
      this.right,
      this.feature,
      this.reply,
      true,
      ids,
    );
  }
}
