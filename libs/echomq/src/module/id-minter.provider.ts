import type { FactoryProvider } from '@nestjs/common';
import { JOB_IDS, SnowflakeMinter } from '../ids';
import { untilOutage } from '../connection/until-outage';
import type { EchoMqModuleOptions } from './echomq-options';
import { ECHOMQ_OPTIONS } from './module-definition';
import { NODE_LEASE_IDLE_PARK_MS, NodeLease } from '../connection/node-lease';
import { RedisConnections } from '../connection/redis-connections';
import { replicaWaitFor } from '../durability/durable-context';
import { JOB_ID_MINTER, type JobIdMinter } from './tokens';

/**
 * The job-id minter. With a configured nodeId it mints on the local clock and always may:
 * uniqueness is then the operator's promise. Otherwise it mints on a node leased from Redis,
 * only inside the lease's window. The lease is acquired in the background (so boot does not
 * wait on Redis; ids minted just after boot still carry a window-ahead time, as a fresh tenure's
 * do), parked after 10 s without a mint (a worker that enqueues nothing then sends a renewal every
 * five minutes), and given back before the connections close.
 *
 * A wait for the lease (ready) is worth it only while Redis is reachable: in an outage
 * (unreachable for a command deadline, or since boot for that long) it fails at once with
 * RedisUnavailableError, as a command would, instead of running out its timeout. So it does on
 * a full Redis (maxmemory reached, noeviction), which refuses the lease's SET NX: with
 * RedisOutOfMemoryError, the error the enqueue would have met in its own script.
 */
export const jobIdMinterProvider: FactoryProvider<JobIdMinter> = {
  provide: JOB_ID_MINTER,
  inject: [ECHOMQ_OPTIONS, RedisConnections],
  useFactory: (options: EchoMqModuleOptions, connections: RedisConnections): JobIdMinter => {
    const node = options.nodeId;
    if (node !== undefined) {
      return { mint: JOB_IDS.minter(new SnowflakeMinter(node)), ready: () => Promise.resolve(), node };
    }
    // Leased among the processes sharing this keyPrefix: other prefixes' ids never meet these.
    // With durable writes a tenure mints only once its replicas confirmed it (docs/model.md).
    const lease = new NodeLease(connections.client, {
      keyPrefix: options.keyPrefix,
      durable: replicaWaitFor(connections, options.durable),
      idleParkMs: NODE_LEASE_IDLE_PARK_MS,
    });
    connections.beforeClose(() => lease.release());
    void lease.acquire();
    const mint = JOB_IDS.minter(lease.snowflakes);
    return {
      mint,
      ready: (timeoutMs) => untilOutage(connections, (signal) => lease.ready(timeoutMs, signal)),
      get node() {
        return lease.node;
      },
    };
  },
};
