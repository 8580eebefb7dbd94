import type { FactoryProvider } from '@nestjs/common';
import { JOB_IDS, SnowflakeMinter } from '../ids';
import type { EchoMqModuleOptions } from './echomq-options';
import { ECHOMQ_OPTIONS } from './module-definition';
import { NodeLease } from '../connection/node-lease';
import { RedisConnections } from '../connection/redis-connections';
import { JOB_ID_MINTER, type JobIdMinter } from './tokens';

/** The job-id minter, on the configured node number or one leased from Redis at boot. */
export const jobIdMinterProvider: FactoryProvider<JobIdMinter> = {
  provide: JOB_ID_MINTER,
  inject: [ECHOMQ_OPTIONS, RedisConnections],
  useFactory: async (options: EchoMqModuleOptions, connections: RedisConnections): Promise<JobIdMinter> => {
    let node = options.nodeId;
    if (node === undefined) {
      const lease = await NodeLease.acquire(connections.client);
      connections.beforeClose(() => lease.release());
      node = lease.node;
    }
    return JOB_IDS.minter(new SnowflakeMinter(node));
  },
};
