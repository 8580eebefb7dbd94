import { randomBytes } from 'node:crypto';
import { nodeLeaseKey, RedisConnections } from '@app/echomq/internal';
import { NodeLease } from '@app/echomq/connection/node-lease';
import { replicaWaitFor } from '@app/echomq/durability/durable-context';
import { withTimeout } from '../worker/fixtures/support';
import { ReplicatedPair } from './support/replicated-pair';

/**
 * With durable writes, a node lease's window (minting) opens only once a renewal of it is on
 * the replica: the promoted replica of a failover then holds this tenure's token, never an
 * earlier holder's, so that holder cannot renew there and mint beside this one.
 */
let pair: ReplicatedPair;
let connections: RedisConnections;
const leases: NodeLease[] = [];

beforeAll(async () => {
  pair = await ReplicatedPair.start();
});

beforeEach(() => {
  connections = new RedisConnections({ connection: { url: pair.master.url } });
});

afterEach(async () => {
  pair.resumeIfPaused();
  await Promise.all(leases.splice(0).map((lease) => lease.release()));
  await connections.onApplicationShutdown();
});

afterAll(async () => {
  await pair.destroy();
});

/** A lease under a key prefix of its own, so no test meets another's node numbers. */
function lease(durable: boolean): { lease: NodeLease; keyPrefix: string } {
  const keyPrefix = `lease-${randomBytes(4).toString('hex')}`;
  const made = new NodeLease(connections.client, {
    keyPrefix,
    durable: durable ? replicaWaitFor(connections, { replicas: 1, timeoutMs: 30_000 }) : undefined,
  });
  leases.push(made);
  return { lease: made, keyPrefix };
}

describe('a node lease with durable writes', () => {
  it('mints only once the replica holds its token', async () => {
    const { lease: durable, keyPrefix } = lease(true);
    await pair.pause();

    await durable.acquire();
    await pair.untilSomeoneWaits('the lease to wait for its replica');
    expect(durable.snowflakes.blocker()).toBe('waiting');

    pair.resume();
    await withTimeout(durable.ready(20_000), 25_000, 'the window to open');
    expect(await pair.onReplica.exists(nodeLeaseKey(durable.node!, keyPrefix))).toBe(1);
    expect(durable.snowflakes.blocker()).toBeUndefined();
  });

  it('without durable writes, mints while the replica is stopped', async () => {
    const { lease: plain } = lease(false);
    await pair.pause();

    await plain.acquire();
    await withTimeout(plain.ready(5_000), 10_000, 'the window to open');

    expect(plain.snowflakes.blocker()).toBeUndefined();
  });
});
