import type { ClusterMaster, RedisCluster } from './redis-cluster';

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

  /**
   * Opens a migration of `slot` from its owner to the master on `toPort`: CLUSTER SETSLOT
   * IMPORTING on the target first, then MIGRATING on the source (redis-cli's order: a source
   * that redirects with ASK must find a target that already accepts the slot). Drive it on
   * with drain() and finish().
   */
  static async begin(cluster: RedisCluster, slot: number, toPort: number): Promise<SlotMigration> {
    const source = await cluster.ownerOf(slot);
    const target = (await cluster.masters()).find((master) => master.port === toPort);
    if (!target) throw new Error(`port ${toPort} is not a master of this cluster`);
    if (target.id === source.id) throw new Error(`slot ${slot} is already on ${toPort}`);
    await cluster.admin(target.port).cluster('SETSLOT', slot, 'IMPORTING', source.id);
    await cluster.admin(source.port).cluster('SETSLOT', slot, 'MIGRATING', target.id);
    return new SlotMigration(cluster, slot, source, target);
  }

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
