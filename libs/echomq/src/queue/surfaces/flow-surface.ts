import type { LaneView } from '../../scripts/lane-reads';
import type { FlowLimits } from '../../scripts/set-limits';
import * as flow from '../flow-admin';
import { assertFlowLimits } from '../flow-limits';
import { laneHoldsOf, queueHeldUntil } from '../holds';
import { JobSurface } from './job-surface';
import { partitionLimits, summedLimits } from '../partitions/partition-limits';
import { limitTargets } from '../partitions/partition-layout';
import { latestHolds, mergeLanes } from '../partitions/partition-merge';

/** QueueService's flow control: pause, limits, lanes and their holds (docs/flow-control.md). */
export abstract class FlowSurface extends JobSurface {
  /** This process's configured limits must not overwrite an admin's at its next registration. */
  protected abstract yieldLimits(queue: string): Promise<void>;

  /** Workers stop claiming from a paused queue; enqueue keeps working. */
  async pause(queue: string): Promise<void> {
    await Promise.all((await this.contextsOf(queue)).map((ctx) => flow.pauseQueue(ctx)));
  }

  async resume(queue: string): Promise<void> {
    await Promise.all((await this.contextsOf(queue)).map((ctx) => flow.resumeQueue(ctx)));
  }

  /** Whether the queue is paused: of a partitioned queue, every partition. */
  async isPaused(queue: string): Promise<boolean> {
    const paused = await Promise.all((await this.contextsOf(queue)).map((ctx) => flow.isQueuePaused(ctx)));
    return paused.every(Boolean);
  }

  /**
   * Sets limits every worker of the queue enforces together, kept in Redis: null clears one, a
   * limit left out stays. Checked like the queue options, as InvalidArgumentError, before anything
   * is sent. A process configured with a limit writes its own again when it next boots (not
   * this one: its own later registrations leave the admin's values alone).
   */
  async setLimits(queue: string, limits: Partial<FlowLimits>): Promise<void> {
    const layout = await this.partitionLayout(queue);
    const checked = assertFlowLimits(limits);
    if (Object.keys(checked).length === 0) return;
    // A partitioned queue's limits are split over its partitions (limitTargets), every share
    // checked first.
    const targets = limitTargets(layout);
    const shares = targets.map((physical, index) => ({
      ctx: this.context(physical),
      limits: partitionLimits(checked, index, targets.length),
    }));
    await Promise.all(
      shares.map(async ({ ctx, limits: share }) => {
        // This process's configured limits must not overwrite the admin's at its next registration.
        await this.yieldLimits(ctx.keys.queue);
        await flow.setLimits(ctx, share, this.repeatOnce());
      }),
    );
  }

  /**
   * The limits in force for the queue, as stored in Redis (null: not set); of a partitioned
   * queue, its partitions' shares summed back: what its workers enforce together.
   */
  async getLimits(queue: string): Promise<FlowLimits> {
    const contexts = limitTargets(await this.partitionLayout(queue)).map((physical) =>
      this.context(physical),
    );
    const shares = await Promise.all(contexts.map((ctx) => flow.getLimits(ctx)));
    return shares.length === 1 ? shares[0] : summedLimits(shares);
  }

  /**
   * Until when the whole queue is held back by a handler's RateLimitedError (scope 'queue'), an
   * instant on the Redis server's clock; null when it is not. Paused is a separate flag (isPaused).
   */
  async heldUntil(queue: string): Promise<Date | null> {
    const holds = await Promise.all((await this.contextsOf(queue)).map((ctx) => queueHeldUntil(ctx)));
    // Of a partitioned queue: the latest hold found in any of its physical queues.
    return holds.reduce<Date | null>(
      (latest, hold) => (hold && (!latest || hold > latest) ? hold : latest),
      null,
    );
  }

  /**
   * The lanes held back until an instant still ahead (Redis server clock), by a handler's
   * RateLimitedError of scope 'lane' or by the lane's rate limit; soonest first.
   */
  async laneHolds(queue: string): Promise<Record<string, Date>> {
    const holds = await Promise.all((await this.contextsOf(queue)).map((ctx) => laneHoldsOf(ctx)));
    return holds.length === 1 ? holds[0] : latestHolds(holds);
  }

  /**
   * A lane's own weight (1 to 1,000) and concurrency cap (1 to 1,000,000); null clears one. Of a
   * partitioned queue, written to every partition: the lane's jobs live in one, which enforces it.
   */
  async setLane(queue: string, lane: string, settings: flow.LaneSettings): Promise<void> {
    const contexts = await this.contextsOf(queue);
    await Promise.all(contexts.map((ctx) => flow.setLane(ctx, lane, settings, this.repeatOnce())));
  }

  /** Workers stop claiming from the lane; other lanes go on. Idempotent. */
  async pauseLane(queue: string, lane: string): Promise<void> {
    const contexts = await this.contextsOf(queue);
    await Promise.all(contexts.map((ctx) => flow.pauseLane(ctx, lane, this.repeatOnce())));
  }

  async resumeLane(queue: string, lane: string): Promise<void> {
    const contexts = await this.contextsOf(queue);
    await Promise.all(contexts.map((ctx) => flow.resumeLane(ctx, lane, this.repeatOnce())));
  }

  /**
   * Every lane with pending or active jobs, held back or paused, by name, with its settings in
   * force; of a partitioned queue, each lane once, its jobs counted over every partition.
   */
  async lanes(queue: string): Promise<LaneView[]> {
    const read = await Promise.all((await this.contextsOf(queue)).map((ctx) => flow.lanes(ctx)));
    return read.length === 1 ? read[0] : mergeLanes(read);
  }
}
