import type { LaneView } from '../../scripts/lane-reads';
import type { FlowLimits } from '../../scripts/set-limits';
import * as flow from '../flow-admin';
import { assertFlowLimits } from '../flow-limits';
import { laneHoldsOf, queueHeldUntil } from '../holds';
import { QueueSurface } from './queue-surface';

/** QueueService's flow control: pause, limits, lanes and their holds (docs/flow-control.md). */
export abstract class FlowSurface extends QueueSurface {
  /** This process's configured limits must not overwrite an admin's at its next registration. */
  protected abstract yieldLimits(queue: string): Promise<void>;

  /** Workers stop claiming from a paused queue; enqueue keeps working. */
  async pause(queue: string): Promise<void> {
    return flow.pauseQueue(this.context(queue));
  }

  async resume(queue: string): Promise<void> {
    return flow.resumeQueue(this.context(queue));
  }

  async isPaused(queue: string): Promise<boolean> {
    return flow.isQueuePaused(this.context(queue));
  }

  /**
   * Sets limits every worker of the queue enforces together, kept in Redis: null clears one, a
   * limit left out stays. Checked like the queue options, as InvalidArgumentError, before anything
   * is sent. A process configured with a limit writes its own again when it next boots (not
   * this one: its own later registrations leave the admin's values alone).
   */
  async setLimits(queue: string, limits: Partial<FlowLimits>): Promise<void> {
    const ctx = this.context(queue);
    const checked = assertFlowLimits(limits);
    if (Object.keys(checked).length === 0) return;
    // This process's configured limits must not overwrite the admin's at its next registration.
    await this.yieldLimits(queue);
    return flow.setLimits(ctx, checked, this.repeatOnce());
  }

  /** The limits in force for the queue, as stored in Redis (null: not set). */
  async getLimits(queue: string): Promise<FlowLimits> {
    return flow.getLimits(this.context(queue));
  }

  /**
   * Until when the whole queue is held back by a handler's RateLimitedError (scope 'queue'), an
   * instant on the Redis server's clock; null when it is not. Paused is a separate flag (isPaused).
   */
  async heldUntil(queue: string): Promise<Date | null> {
    return queueHeldUntil(this.context(queue));
  }

  /**
   * The lanes held back until an instant still ahead (Redis server clock), by a handler's
   * RateLimitedError of scope 'lane' or by the lane's rate limit; soonest first.
   */
  async laneHolds(queue: string): Promise<Record<string, Date>> {
    return laneHoldsOf(this.context(queue));
  }

  /** A lane's own weight (1 to 1,000) and concurrency cap (1 to 1,000,000); null clears one. */
  async setLane(queue: string, lane: string, settings: flow.LaneSettings): Promise<void> {
    return flow.setLane(this.context(queue), lane, settings, this.repeatOnce());
  }

  /** Workers stop claiming from the lane; other lanes go on. Idempotent. */
  async pauseLane(queue: string, lane: string): Promise<void> {
    return flow.pauseLane(this.context(queue), lane, this.repeatOnce());
  }

  async resumeLane(queue: string, lane: string): Promise<void> {
    return flow.resumeLane(this.context(queue), lane, this.repeatOnce());
  }

  /** Every lane with pending or active jobs, held back or paused, by name, with its settings in force. */
  async lanes(queue: string): Promise<LaneView[]> {
    return flow.lanes(this.context(queue));
  }
}
