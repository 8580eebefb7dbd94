import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { MAX_NODE } from '../ids';
import { nodeLeaseKey } from '../keyspace';
import type { RedisClient } from '../scripts';

const LEASE_MS = 60_000;
const RENEW_EVERY_MS = 20_000;

/** Renews the lease only while this process still owns it (compare-and-expire). */
const RENEW_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`;
const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

/**
 * Leases a Snowflake node number from Redis (`emq:node:<n>`, SET NX with a TTL), so
 * no two live processes mint ids with the same node number. The lease is renewed
 * in the background and given back at shutdown.
 */
export class NodeLease {
  private readonly logger = new Logger('EchoMQ');
  private readonly owner = randomBytes(12).toString('hex');
  private timer?: NodeJS.Timeout;

  private constructor(
    private readonly redis: RedisClient,
    readonly node: number,
  ) {}

  static async acquire(redis: RedisClient): Promise<NodeLease> {
    const start = Math.floor(Math.random() * (MAX_NODE + 1));
    for (let step = 0; step <= MAX_NODE; step++) {
      const node = (start + step) % (MAX_NODE + 1);
      const lease = new NodeLease(redis, node);
      const taken = await redis.set(nodeLeaseKey(node), lease.owner, 'PX', LEASE_MS, 'NX');
      if (taken === 'OK') {
        lease.keepAlive();
        return lease;
      }
    }
    throw new Error(`All ${MAX_NODE + 1} Snowflake node numbers are leased; set nodeId explicitly`);
  }

  private keepAlive(): void {
    this.timer = setInterval(() => {
      this.redis
        .eval(RENEW_LUA, 1, nodeLeaseKey(this.node), this.owner, LEASE_MS)
        .then((renewed) => {
          if (Number(renewed) !== 1) {
            this.logger.error(
              `Lost the lease on Snowflake node ${this.node}; ids may collide. Set nodeId explicitly.`,
            );
          }
        })
        .catch((error: Error) => this.logger.warn(`Could not renew node lease: ${error.message}`));
    }, RENEW_EVERY_MS);
    this.timer.unref();
  }

  async release(): Promise<void> {
    clearInterval(this.timer);
    await this.redis.eval(RELEASE_LUA, 1, nodeLeaseKey(this.node), this.owner);
  }
}
