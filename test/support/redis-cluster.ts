import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './redis-server';

/** One master of the cluster: its node id (as CLUSTER NODES names it) and its address. */
export interface ClusterMaster {
  readonly id: string;
  readonly host: string;
  readonly port: number;
}

/** How far a slot migration has come, handed to the between-batches hook. */
export interface MigrationProgress {
  /** Batches moved so far (MIGRATE calls that found keys). */
  readonly batches: number;
  /** Keys moved so far. */
  readonly moved: number;
}

export interface DrainOptions {
  /** Keys per CLUSTER GETKEYSINSLOT + MIGRATE round. Default 10 (redis-cli's --cluster-pipeline default). */
  readonly batch?: number;
  /** MIGRATE's timeout in ms. Default 5000. */
  readonly timeoutMs?: number;
  /**
   * Awaited after every batch that moved keys, while the slot is half-migrated: where a
   * test acts in the middle of the migration, or pauses to keep it open (a fault schedule).
   */
  readonly betweenBatches?: (progress: MigrationProgress) => Promise<void> | void;
}

/** Rounds of GETKEYSINSLOT a drain makes before it gives up (writers keep adding keys, or MIGRATE moves nothing). */
const DRAIN_ROUNDS_MAX = 100_000;

/**
 * One hash slot on its way from `source` to `target`, driven the way
 * `redis-cli --cluster reshard` drives it, one step at a time so a test can act in the
 * middle: begin (IMPORTING on the target, MIGRATING on the source), drain (MIGRATE the
 * slot's keys in small batches), finish (SETSLOT NODE on every master). Between begin and
 * finish the slot is half-migrated: the source answers ASK for keys it no longer has and
 * TRYAGAIN for multi-key calls whose keys are split between the two nodes.
 */
export class SlotMigration {
  private moved = 0;
  private batches = 0;
  private finished = false;

  constructor(
    private readonly cluster: RedisCluster,
    readonly slot: number,
    readonly source: ClusterMaster,
    readonly target: ClusterMaster,
  ) {}

  /**
   * Moves at most `batch` keys of the slot from the source to the target with one
   * MIGRATE ... KEYS call. Returns how many keys GETKEYSINSLOT listed (0: nothing left).
   */
  async moveBatch(batch = 10, timeoutMs = 5_000): Promise<number> {
    const source = this.cluster.admin(this.source.port);
    const keys = await source.cluster('GETKEYSINSLOT', this.slot, batch);
    if (keys.length === 0) return 0;
    // Without REPLACE, as redis-cli does by default: a key on both sides (BUSYKEY) means
    // someone wrote the same key on both nodes during the migration, which a test must see.
    // NOKEY: every listed key was deleted in between (a job finished); nothing to move.
    await source.migrate(this.target.host, this.target.port, '', 0, timeoutMs, 'KEYS', ...keys);
    this.batches++;
    this.moved += keys.length;
    return keys.length;
  }

  /**
   * MIGRATEs batches until the source holds no key of the slot. Keys created on the source
   * while it drains (a write to a key it still has) are picked up by later rounds.
   */
  async drain(options: DrainOptions = {}): Promise<MigrationProgress> {
    const batch = options.batch ?? 10;
    for (let round = 0; round < DRAIN_ROUNDS_MAX; round++) {
      if ((await this.moveBatch(batch, options.timeoutMs)) === 0) return this.progress;
      await options.betweenBatches?.(this.progress);
    }
    throw new Error(`slot ${this.slot}: the source still had keys after ${DRAIN_ROUNDS_MAX} rounds`);
  }

  get progress(): MigrationProgress {
    return { batches: this.batches, moved: this.moved };
  }

  /**
   * Assigns the slot to the target on the target, the source and every other master (in
   * that order, as redis-cli does: the target first, so that from the moment the source lets
   * go some node owns the slot), then waits until every master's view agrees.
   */
  async finish(): Promise<void> {
    if (this.finished) return;
    await this.cluster.admin(this.target.port).cluster('SETSLOT', this.slot, 'NODE', this.target.id);
    // The source refuses to let go while it still holds keys of the slot; a writer may have
    // created one after the last drain round (a write to a key it still had), so drain again.
    for (let tries = 0; ; tries++) {
      try {
        await this.cluster.admin(this.source.port).cluster('SETSLOT', this.slot, 'NODE', this.target.id);
        break;
      } catch (error) {
        if (tries >= 10 || !/still hold keys/i.test((error as Error).message)) throw error;
        await this.drain();
      }
    }
    for (const master of await this.cluster.masters()) {
      if (master.id === this.source.id || master.id === this.target.id) continue;
      await this.cluster.admin(master.port).cluster('SETSLOT', this.slot, 'NODE', this.target.id);
    }
    this.finished = true;
    await this.cluster.waitForOwner(this.slot, this.target.port);
  }
}

/**
 * A real Redis Cluster of throwaway redis-server processes on loopback (three masters,
 * no replicas, no persistence), created with `redis-cli --cluster create`.
 */
export class RedisCluster {
  /** One admin connection per node, for the cluster commands a test or a migration sends. */
  private readonly admins = new Map<number, Redis>();
  private ids?: Map<number, string>;

  private constructor(
    readonly ports: readonly number[],
    private readonly children: readonly ChildProcess[],
    private readonly dir: string,
  ) {}

  get nodes(): { host: string; port: number }[] {
    return this.ports.map((port) => ({ host: '127.0.0.1', port }));
  }

  static async start(masters = 3): Promise<RedisCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'echomq-cluster-'));
    const ports: number[] = [];
    for (let i = 0; i < masters; i++) ports.push(await freePort());
    const children = ports.map((port) =>
      spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'no',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--dir',
          dir,
        ],
        { stdio: 'ignore' },
      ),
    );
    const cluster = new RedisCluster(ports, children, dir);
    try {
      for (const port of ports) await cluster.waitFor(port, async (redis) => (await redis.ping()) === 'PONG');
      const created = spawnSync(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...ports.map((port) => `127.0.0.1:${port}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ],
        { encoding: 'utf8' },
      );
      if (created.status !== 0)
        throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
      for (const port of ports) {
        await cluster.waitFor(port, async (redis) =>
          (await redis.cluster('INFO')).includes('cluster_state:ok'),
        );
      }
    } catch (error) {
      await cluster.destroy();
      throw error;
    }
    return cluster;
  }

  /**
   * A plain (non-cluster) connection to one node, opened on first use and closed by
   * destroy(). Plain, because admin commands (SETSLOT, GETKEYSINSLOT, MIGRATE) are about
   * that node, and a cluster client would route or redirect them.
   */
  admin(port: number): Redis {
    if (!this.ports.includes(port)) throw new Error(`port ${port} is not a node of this cluster`);
    let redis = this.admins.get(port);
    if (!redis) {
      // No reconnects and no retries: a node that is gone should fail the test at once.
      redis = new Redis({ port, host: '127.0.0.1', retryStrategy: () => null, maxRetriesPerRequest: 0 });
      redis.on('error', () => undefined);
      this.admins.set(port, redis);
    }
    return redis;
  }

  /** The node id of the node on `port` (CLUSTER MYID), cached: ids never change. */
  async nodeId(port: number): Promise<string> {
    if (!this.ids) {
      const ids = new Map<number, string>();
      for (const each of this.ports) ids.set(each, String(await this.admin(each).cluster('MYID')));
      this.ids = ids;
    }
    return this.ids.get(port)!;
  }

  /** Every master (all nodes are masters here), in port order. */
  async masters(): Promise<ClusterMaster[]> {
    return Promise.all(
      this.ports.map(async (port) => ({ id: await this.nodeId(port), host: '127.0.0.1', port })),
    );
  }

  /** The hash slot of a key, as the server computes it (hashtags included). */
  async slotOf(key: string): Promise<number> {
    return Number(await this.admin(this.ports[0]).cluster('KEYSLOT', key));
  }

  /** The master that owns `slot` in the view of the node on `viaPort` (default: the first node). */
  async ownerOf(slot: number, viaPort = this.ports[0]): Promise<ClusterMaster> {
    const ranges = await this.admin(viaPort).cluster('SLOTS');
    const range = ranges.find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`node ${viaPort} sees no owner for slot ${slot}`);
    const [, , [host, port, id]] = range;
    return { id, host, port: Number(port) };
  }

  /** The keys of `slot` stored on the node on `port` (at most `max`). */
  async keysInSlot(slot: number, port: number, max = 100_000): Promise<string[]> {
    return this.admin(port).cluster('GETKEYSINSLOT', slot, max);
  }

  /** Polls every master until each reports `port` as the owner of `slot` (gossip has no event to await). */
  async waitForOwner(slot: number, port: number): Promise<void> {
    for (const via of this.ports) {
      await this.waitFor(via, async () => (await this.ownerOf(slot, via)).port === port);
    }
  }

  /**
   * Opens a migration of `slot` from its owner to the master on `toPort`: CLUSTER SETSLOT
   * IMPORTING on the target first, then MIGRATING on the source (redis-cli's order: a
   * source that redirects with ASK must find a target that already accepts the slot).
   * Drive it on with drain() and finish().
   */
  async beginMigration(slot: number, toPort: number): Promise<SlotMigration> {
    const source = await this.ownerOf(slot);
    const target = (await this.masters()).find((master) => master.port === toPort);
    if (!target) throw new Error(`port ${toPort} is not a master of this cluster`);
    if (target.id === source.id) throw new Error(`slot ${slot} is already on ${toPort}`);
    await this.admin(target.port).cluster('SETSLOT', slot, 'IMPORTING', source.id);
    await this.admin(source.port).cluster('SETSLOT', slot, 'MIGRATING', target.id);
    return new SlotMigration(this, slot, source, target);
  }

  /** The whole migration in one call: begin, drain (with the hook between batches), finish. */
  async migrateSlot(slot: number, toPort: number, options: DrainOptions = {}): Promise<MigrationProgress> {
    const migration = await this.beginMigration(slot, toPort);
    const progress = await migration.drain(options);
    await migration.finish();
    return progress;
  }

  /** Polls one node until the check passes (cluster formation has no event to await). */
  private async waitFor(port: number, check: (redis: Redis) => Promise<boolean>): Promise<void> {
    for (let tries = 0; tries < 200; tries++) {
      const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
      redis.on('error', () => undefined);
      try {
        await redis.connect();
        if (await check(redis)) return;
      } catch {
        // not up yet
      } finally {
        redis.disconnect();
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`cluster node ${port} did not become ready`);
  }

  async destroy(): Promise<void> {
    for (const redis of this.admins.values()) redis.disconnect();
    this.admins.clear();
    await Promise.all(
      this.children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}
