import { Redis, type RedisOptions } from 'ioredis';
import { EchoMqError, JOB_IDS, nodeLeaseKey, snowflakeParts } from '@app/echomq/internal';
import { NodeLeaseLostError, type NodeLeaseBlocker } from '@app/echomq/ids';
import { NodeLease, type LeaseTimers, type NodeLeaseOptions } from '@app/echomq/connection/node-lease';
import { jobIdMinterProvider } from '@app/echomq/module/id-minter.provider';
import { RedisServer } from '../support/redis-server';

/**
 * The node lease against a real redis-server of its own (so no other suite's leases share its
 * keys). Each lease runs on a ManualTime: its monotonic clock and timers move only when the
 * test moves them. Only the Redis server's clock is real, and the tests wait for it (a few
 * tens of ms) where the protocol needs server time to pass.
 */
const LEASE_MS = 1_000;
const MARGIN_MS = 20;

class ManualTime implements LeaseTimers {
  private readonly timers = new Map<number, { at: number; callback: () => void }>();
  private nextHandle = 1;

  constructor(public now: number) {}

  readonly clock = (): number => this.now;

  setTimeout(callback: () => void, ms: number): unknown {
    const handle = this.nextHandle++;
    this.timers.set(handle, { at: this.now + ms, callback });
    return handle;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Moves the clock without running timers (so no renewal happens behind the test's back). */
  set(now: number): void {
    this.now = Math.max(this.now, now);
  }

  /** Runs the timers that are due, in order. */
  runDue(): void {
    for (;;) {
      const due = [...this.timers]
        .filter(([, timer]) => timer.at <= this.now)
        .sort(([, a], [, b]) => a.at - b.at);
      if (due.length === 0) return;
      this.timers.delete(due[0][0]);
      due[0][1].callback();
    }
  }
}

const quiet = { warn: () => undefined, error: () => undefined };
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

let server: RedisServer;
const clients: Redis[] = [];
const leases: NodeLease[] = [];

function client(target: RedisServer = server, options: RedisOptions = {}): Redis {
  const redis = new Redis(target.url, options);
  redis.on('error', () => undefined);
  clients.push(redis);
  return redis;
}

function leaseOn(redis: Redis, time: ManualTime, options: NodeLeaseOptions = {}): NodeLease {
  const lease = new NodeLease(redis, {
    leaseMs: LEASE_MS,
    marginMs: MARGIN_MS,
    clock: time.clock,
    timers: time,
    logger: quiet,
    ...options,
  });
  leases.push(lease);
  return lease;
}

/**
 * Brings a fresh tenure to the point where it mints: a renewal once the server clock has moved
 * past the margin since the acquisition (which lifts the ceiling above the floor), then the
 * local clock moved to the floor, one lease after the acquisition.
 */
async function openWindow(lease: NodeLease, time: ManualTime): Promise<void> {
  await sleep(MARGIN_MS + 10);
  await lease.renew();
  const window = lease.window()!;
  time.set(window.floorMs - window.serverOffsetMs);
  expect(lease.snowflakes.blocker()).toBeUndefined();
}

/** Mints up to `max` ids, stopping at the first refusal, which must be a NodeLeaseLostError. */
function mintUpTo(lease: NodeLease, max: number): bigint[] {
  const mint = JOB_IDS.minter(lease.snowflakes);
  const values: bigint[] = [];
  for (let i = 0; i < max; i++) {
    try {
      values.push(JOB_IDS.decode(mint())!);
    } catch (error) {
      expect(error).toBeInstanceOf(NodeLeaseLostError);
      break;
    }
  }
  return values;
}

function refusalOf(lease: NodeLease): NodeLeaseBlocker | undefined {
  try {
    JOB_IDS.minter(lease.snowflakes)();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(NodeLeaseLostError);
    expect(error).toBeInstanceOf(EchoMqError);
    expect((error as NodeLeaseLostError).code).toBe('NODE_LEASE_LOST');
    return (error as NodeLeaseLostError).reason;
  }
}

const maxOf = (values: readonly bigint[]): bigint =>
  values.reduce((max, value) => (value > max ? value : max));
const minOf = (values: readonly bigint[]): bigint =>
  values.reduce((min, value) => (value < min ? value : min));
const randomNode = (): number => Math.floor(Math.random() * 1000);

async function until(condition: () => boolean): Promise<void> {
  for (let tries = 0; !condition(); tries++) {
    if (tries > 400) throw new Error('condition not reached');
    await sleep(10);
  }
}

beforeAll(async () => {
  server = await RedisServer.start();
});

afterEach(async () => {
  for (const lease of leases.splice(0)) await lease.release(0);
  for (const redis of clients.splice(0)) redis.disconnect();
});

afterAll(async () => {
  await server.destroy();
});

describe('the node lease', () => {
  it('a second process that takes the node after its key was deleted never mints an id the first minted; the first moves to another node at its next renewal', async () => {
    const node = randomNode();
    const timeA = new ManualTime(0);
    const timeB = new ManualTime(7_777_777); // another host: its monotonic clock has another origin
    const a = leaseOn(client(), timeA, { firstNode: node });
    await a.acquire();
    expect(a.node).toBe(node);
    await openWindow(a, timeA);
    const beforeTakeover = mintUpTo(a, 3_000);
    expect(beforeTakeover).toHaveLength(3_000);

    // Redis loses the key (a restart without persistence, a failover); B leases the node.
    await client().del(nodeLeaseKey(node));
    const b = leaseOn(client(), timeB, { firstNode: node });
    await b.acquire();
    expect(b.node).toBe(node);
    // B cannot tell a deleted key from an expired one, so it waits out one lease first.
    expect(refusalOf(b)).toBe('waiting');

    // A has not renewed yet, so it does not know, and keeps minting, up to its window's end.
    const window = a.window()!;
    timeA.set(window.ceilingMs - 2 - window.serverOffsetMs);
    const duringOverlap = mintUpTo(a, 3_000);
    expect(duringOverlap.length).toBeGreaterThan(0);

    await openWindow(b, timeB);
    const fromB = mintUpTo(b, 5_000);
    expect(fromB).toHaveLength(5_000);
    expect(minOf(fromB) > maxOf([...beforeTakeover, ...duringOverlap])).toBe(true);

    // A's next renewal finds B's token: it stops at once and leases another node.
    await a.renew();
    expect(refusalOf(a)).toBe(a.node === undefined ? 'not-held' : 'waiting');
    await a.acquire();
    expect(a.node).not.toBe(node);
    await openWindow(a, timeA);
    const afterMove = mintUpTo(a, 3_000);
    expect(afterMove).toHaveLength(3_000);
    expect(afterMove.every((value) => snowflakeParts(value).node === a.node)).toBe(true);
    expect(minOf(afterMove) > maxOf(duringOverlap)).toBe(true);

    const all = [...beforeTakeover, ...duringOverlap, ...fromB, ...afterMove];
    expect(new Set(all).size).toBe(all.length);
    expect(await client().get(nodeLeaseKey(node))).not.toBeNull(); // B still holds it
  });

  it('takes its own node back when the key is gone, and ready() resolves once it mints again', async () => {
    const node = randomNode();
    const time = new ManualTime(0);
    const lease = leaseOn(client(), time, { firstNode: node });
    await lease.acquire();
    await openWindow(lease, time);
    const before = mintUpTo(lease, 2_000);

    await client().del(nodeLeaseKey(node));
    await lease.renew();
    expect(['not-held', 'waiting']).toContain(refusalOf(lease));
    let readied = false;
    const ready = lease.ready(60_000).then(() => (readied = true));

    await lease.acquire();
    expect(lease.node).toBe(node);
    expect(refusalOf(lease)).toBe('waiting');
    expect(readied).toBe(false);
    // ready() asks for the renewal that opens the new window itself, rather than wait for the timer.
    await ready;
    expect(refusalOf(lease)).toBeUndefined();
    const after = mintUpTo(lease, 2_000);
    expect(after).toHaveLength(2_000);
    expect(minOf(after) > maxOf(before)).toBe(true);
  });

  it("ids after a takeover are greater than the old holder's even when the old holder's clock raced ahead of the server", async () => {
    const node = randomNode();
    const timeA = new ManualTime(0);
    const timeB = new ManualTime(123_456_789_000);
    const a = leaseOn(client(), timeA, { firstNode: node });
    await a.acquire();
    await openWindow(a, timeA);
    // Each round A's clock jumps as far ahead as its window lets it: after three rounds its ids
    // are stamped well after the server's time, as a host with a fast clock would stamp them.
    const fromA: bigint[] = [];
    for (let round = 0; round < 3; round++) {
      await sleep(5);
      await a.renew();
      const window = a.window()!;
      timeA.set(window.validUntil - 1);
      fromA.push(...mintUpTo(a, 3_000));
    }

    await client().del(nodeLeaseKey(node));
    const b = leaseOn(client(), timeB, { firstNode: node });
    await b.acquire();
    expect(b.node).toBe(node);
    const acquiredAtServerMs = b.window()!.floorMs - LEASE_MS - 1;
    expect(snowflakeParts(maxOf(fromA)).timeMs).toBeGreaterThan(acquiredAtServerMs);

    await openWindow(b, timeB);
    const fromB = mintUpTo(b, 5_000);
    expect(fromB.length).toBeGreaterThan(0);
    expect(minOf(fromB) > maxOf(fromA)).toBe(true);
  });

  it('keeps minting through a failed renewal, stops at its local deadline while Redis is down, and resumes on a node after the restart', async () => {
    const own = await RedisServer.start();
    try {
      // No offline queue: while the server is down, commands fail at once instead of waiting.
      const redis = client(own, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
      await until(() => redis.status === 'ready');
      const time = new ManualTime(0);
      const lease = leaseOn(redis, time, { firstNode: randomNode() });
      await lease.acquire();
      await openWindow(lease, time);
      const before = mintUpTo(lease, 1_000);

      await own.stop();
      await until(() => redis.status !== 'ready');
      await lease.renew(); // fails: not a loss by itself
      expect(lease.node).toBeDefined();
      expect(refusalOf(lease)).toBeUndefined();

      time.set(lease.window()!.validUntil);
      expect(refusalOf(lease)).toBe('unconfirmed');
      const gaveUp = lease.ready(100);
      time.set(time.now + 100);
      time.runDue();
      await expect(gaveUp).rejects.toBeInstanceOf(NodeLeaseLostError);

      // Redis comes back empty: the next renewal finds the key gone, and the lease starts over.
      await own.restart();
      await until(() => redis.status === 'ready');
      const ready = lease.ready(60_000);
      await lease.renew();
      await lease.acquire();
      await openWindow(lease, time);
      time.runDue();
      await ready;
      const after = mintUpTo(lease, 1_000);
      expect(minOf(after) > maxOf(before)).toBe(true);

      // Release is bounded even when Redis is gone again.
      await own.stop();
      const released = lease.release(500);
      time.set(time.now + 500);
      time.runDue();
      await released;
      expect(refusalOf(lease)).toBe('not-held');
    } finally {
      await own.destroy();
    }
  });

  it('parks an idle tenure after idleParkMs without a mint, and the next ready() renews the same tenure', async () => {
    const node = randomNode();
    const time = new ManualTime(0);
    const parkedTtlMs = 60_000;
    const redis = client();
    const lease = leaseOn(redis, time, { firstNode: node, idleParkMs: 3 * LEASE_MS, parkedTtlMs });
    await lease.acquire();
    await openWindow(lease, time);
    const before = mintUpTo(lease, 10);
    expect(before).toHaveLength(10);
    const floor = lease.window()!.floorMs;

    // Renewals go on while the last mint is recent (the key's TTL stays within one lease).
    const renewEvery = LEASE_MS / 4;
    const step = async (): Promise<void> => {
      time.set(time.now + renewEvery);
      time.runDue();
      await sleep(5);
    };
    for (let i = 0; i < 8; i++) await step();
    expect(await redis.pttl(nodeLeaseKey(node))).toBeLessThanOrEqual(LEASE_MS);
    // Past idleParkMs: one renewal with the parked TTL, and none after it.
    for (let i = 0; i < 8; i++) await step();
    const parkedTtl = await redis.pttl(nodeLeaseKey(node));
    expect(parkedTtl).toBeGreaterThan(LEASE_MS);
    expect(parkedTtl).toBeLessThanOrEqual(parkedTtlMs);
    for (let i = 0; i < 8; i++) await step();
    expect(await redis.pttl(nodeLeaseKey(node))).toBeLessThan(parkedTtl); // not renewed since
    expect(refusalOf(lease)).toBe('unconfirmed');

    // The next mint's wait renews the same tenure: same node, same floor, ids after the earlier ones.
    await lease.ready(60_000);
    expect(lease.node).toBe(node);
    expect(lease.window()!.floorMs).toBe(floor);
    expect(await redis.pttl(nodeLeaseKey(node))).toBeLessThanOrEqual(LEASE_MS);
    const after = mintUpTo(lease, 10);
    expect(after).toHaveLength(10);
    expect(minOf(after) > maxOf(before)).toBe(true);
  });

  it("release deletes the key only while it is still this process's", async () => {
    const node = randomNode();
    const time = new ManualTime(0);
    const a = leaseOn(client(), time, { firstNode: node });
    await a.acquire();
    await a.release();
    expect(await client().exists(nodeLeaseKey(node))).toBe(0);
    expect(refusalOf(a)).toBe('not-held');

    const b = leaseOn(client(), time, { firstNode: node });
    await b.acquire();
    await client().del(nodeLeaseKey(node));
    const c = leaseOn(client(), time, { firstNode: node });
    await c.acquire();
    await b.release();
    expect(await client().get(nodeLeaseKey(node))).not.toBeNull(); // c's lease survives b's release
  });

  it('with a configured nodeId the provider mints at once and always', async () => {
    const minter = await jobIdMinterProvider.useFactory(
      { connection: { url: server.url }, nodeId: 7 },
      undefined, // the connections: not used when the node is configured
    );
    await minter.ready(0);
    expect(minter.node).toBe(7);
    expect(JOB_IDS.parts(minter.mint())?.node).toBe(7);
  });
});
