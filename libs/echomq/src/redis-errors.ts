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
