import type { FactoryProvider } from '@nestjs/common';
import { JOB_IDS, SnowflakeMinter } from '../ids';
import type { EchoMqModuleOptions } from './echomq-options';
import { ECHOMQ_OPTIONS } from './module-definition';
import { NodeLease } from '../connection/node-lease';
import { RedisConnections } from '../connection/redis-connections';
import { JOB_ID_MINTER, type JobIdMinter } from './tokens';

/**
 * The job-id minter. With a configured nodeId it mints on the local clock and always may:
 * uniqueness is then the operator's promise. Otherwise it mints on a node leased from Redis,
 * only inside the lease's window. The lease is acquired in the background (so boot does not
 * wait on Redis) and given back before the connections close.
 */
export const jobIdMinterProvider: FactoryProvider<JobIdMinter> = {
  provide: JOB_ID_MINTER,
  inject: [ECHOMQ_OPTIONS, RedisConnections],
  useFactory: (options: EchoMqModuleOptions, connections: RedisConnections): JobIdMinter => {
    const node = options.nodeId;
    if (node !== undefined) {
      return { mint: JOB_IDS.minter(new SnowflakeMinter(node)), ready: () => Promise.resolve(), node };
    }
    const lease = new NodeLease(connections.client);
    connections.beforeClose(() => lease.release());
    void lease.acquire();
    const mint = JOB_IDS.minter(lease.snowflakes);
    return {
      mint,
      ready: (timeoutMs) => lease.ready(timeoutMs),
      get node() {
        return lease.node;
      },
    };
  },
};
