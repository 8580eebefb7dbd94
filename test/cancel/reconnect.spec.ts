import type { Redis } from 'ioredis';
import {
  CancelWatch,
  claimJobs,
  enqueueJobs,
  RedisConnections,
  removeJob,
  type RedisClient,
  type ScriptContext,
} from '@app/echomq/internal';
import { jobRecord } from '../support/assertions';
import type { FaultProxy } from '../support/fault-proxy';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { FAST, startProxy, stopWhenDrained } from '../faults/support/faults';
import { deferred, waitUntil, withTimeout } from '../worker/fixtures/support';
import { blockedReaders } from './support/cancels';

/**
 * After an outage, the cancel reader is back within about its retry cap (250 ms), not the 1–2 s
 * EchoMQ's other connections wait between reconnects once an outage lasts a few seconds.
 */
const TRIES_BEFORE_HEAL = 7;
/** Generous: the reader's own schedule gives at most about 250 ms plus a round trip. */
const BACK_WITHIN_MS = 1_000;
const WAIT_MS = 20_000;

const mint = idMinter(45);
let direct: Redis;
let proxy: FaultProxy;
let connections: Connections;
let watch: CancelWatch;

/**
 * RedisConnections that let the test see each blocking client it opens, to count the reader's
 * tries to reach Redis: a reconnect of a client, or a fresh client (a blocked read is given up,
 * and its client dropped, when the command connection closes).
 */
class Connections extends RedisConnections {
  readonly opened: RedisClient[] = [];
  onOpen?: (client: RedisClient) => void;

  override createBlockingClient(...args: Parameters<RedisConnections['createBlockingClient']>): RedisClient {
    const client = super.createBlockingClient(...args);
    this.opened.push(client);
    this.onOpen?.(client);
    return client;
  }
}

beforeAll(() => {
  direct = connect();
});

afterAll(() => {
  direct.disconnect();
});

beforeEach(async () => {
  proxy = await startProxy();
});

afterEach(async () => {
  watch.close();
  await proxy.heal();
  // Closed while its ready check is in flight, a command client leaves a reconnect timer behind.
  await waitUntil(() => connections.client.status === 'ready', 'the command connection to be back');
  await connections.onApplicationShutdown();
  await stopWhenDrained(proxy);
});

async function activeJob(ctx: ScriptContext): Promise<{ id: string; attempt: number }> {
  const id = mint();
  await enqueueJobs(ctx, [jobRecord(id)], 60_000);
  const [claim] = (await claimJobs(ctx, { count: 1, leaseMs: 60_000, claimantPrefix: `rc-${id}` })).jobs;
  return { id, attempt: claim.attempt };
}

describe('the cancel reader after an outage', () => {
  it('delivers a removal made during the outage promptly once Redis is reachable again', async () => {
    const name = uniqueQueue('cancelrc');
    connections = new Connections({ connection: { url: proxy.url, connectionName: name }, ...FAST });
    watch = new CancelWatch(connections);
    const ctx = scriptContext(direct, uniqueQueue('rc'));
    const told = deferred<number>();
    const subscription = watch.watch(ctx.keys, (_id, attempt) => told.resolve(attempt));
    await subscription.ready;
    await waitUntil(async () => (await blockedReaders(direct, name)).length === 1, 'the blocked XREAD');

    // The outage: connecting is refused (ECONNREFUSED) and every open connection is reset.
    const tries = deferred();
    let reconnects = 0;
    const tried = (): void => {
      if (++reconnects === TRIES_BEFORE_HEAL) tries.resolve();
    };
    const follow = (client: RedisClient): void => void client.on('reconnecting', tried);
    for (const client of connections.opened) follow(client);
    connections.onOpen = (client) => {
      tried();
      follow(client);
    };
    const outageStart = Date.now();
    await proxy.refuseNew(true);
    proxy.closeAll();
    // Removed while the reader cannot read (on the real server, not through the proxy).
    const job = await activeJob(ctx);
    await expect(removeJob(ctx, job.id)).resolves.toBe('active');
    // Over once the reader tried TRIES_BEFORE_HEAL times: with a retry schedule that doubles up
    // to 2 s, its next try would then be 1 s away or more.
    await withTimeout(tries.promise, WAIT_MS, `${TRIES_BEFORE_HEAL} reconnect tries`);
    await proxy.heal();
    const healedAt = Date.now();

    await expect(withTimeout(told.promise, WAIT_MS, 'the removal to be read')).resolves.toBe(job.attempt);
    const delay = Date.now() - healedAt;
    console.log(
      `cancel reader: outage of ${healedAt - outageStart} ms (${reconnects} reconnect tries); ` +
        `the removal made during it was read ${delay} ms after Redis was reachable again`,
    );
    expect(delay).toBeLessThan(BACK_WITHIN_MS);
    subscription.stop();
  });
});
