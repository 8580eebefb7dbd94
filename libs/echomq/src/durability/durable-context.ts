import type { RedisConnections } from '../connection/redis-connections';
import type { DurableOptions } from '../module/echomq-options';
import { DURABLE_TIMEOUT_DEFAULT_MS } from '../module/validate-options';
import type { ScriptContext } from '../scripts';
import { ReplicaConfirmer, type ReplicaWait } from './replica-confirmer';

/**
 * A queue's script context in a process whose writes are durable (module option `durable`):
 * `durability` confirms enqueues and claims with WAIT. Absent otherwise, and for contexts
 * built outside QueueService (tests, tools), which then write as usual.
 */
export type DurableScriptContext = ScriptContext & { readonly durability?: ReplicaWait };

const confirmers = new WeakMap<RedisConnections, ReplicaConfirmer>();

/**
 * The application's one replica confirmer (a connection per master, one WAIT at a time on each,
 * shared by its concurrent callers), created on first use; undefined when writes are not durable.
 */
export function replicaWaitFor(
  connections: RedisConnections,
  durable: DurableOptions | undefined,
): ReplicaWait | undefined {
  if (durable === undefined) return undefined;
  let confirmer = confirmers.get(connections);
  if (!confirmer) {
    confirmer = new ReplicaConfirmer(
      connections,
      durable.replicas,
      durable.timeoutMs ?? DURABLE_TIMEOUT_DEFAULT_MS,
    );
    confirmers.set(connections, confirmer);
  }
  return confirmer;
}
