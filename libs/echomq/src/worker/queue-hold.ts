import type { Logger } from '@nestjs/common';
import { queueHeldUntil } from '../queue/holds';
import type { ScriptContext } from '../scripts';
import { holdQueueUntil } from '../scripts/hold-queue';

/** The other physical queues of a loop's queue (partitions, the queue itself); none when unpartitioned. */
export type OtherPhysicalQueues = () => Promise<readonly ScriptContext[]>;

/**
 * A handler's RateLimitedError of scope 'queue' holds the whole queue (docs/flow-control.md).
 * The throttle holds the physical queue its job ran in; on a partitioned queue this then holds
 * every other physical queue of the layout until the same instant (a later hold stays), so no
 * partition keeps calling the service that just answered "too many". The instant is read back
 * from the job's own partition, on its server's clock (a longer hold already there is the one
 * passed on). One call per physical queue, each its own slot, all at once.
 *
 * Best effort: the job is settled already, and a physical queue that cannot be held now (its
 * master unreachable) is logged and left; its own handlers' limits still hold it when they
 * meet the service's refusal.
 */
export class QueueHold {
  constructor(
    private readonly own: ScriptContext,
    private readonly others: OtherPhysicalQueues,
    private readonly logger: Logger,
  ) {}

  async spread(): Promise<void> {
    const others = await this.others().catch((error: unknown) => this.warn('its layout', error));
    if (!others || others.length === 0) return;
    const until = await queueHeldUntil(this.own).catch((error: unknown) => this.warn('its hold', error));
    // No hold left to pass on: it ended already (or a resume lifted it).
    if (!until) return;
    await Promise.all(
      others.map((ctx) =>
        holdQueueUntil(ctx, until.getTime()).catch((error: unknown) => this.warn(ctx.keys.queue, error)),
      ),
    );
  }

  private warn(what: string, error: unknown): undefined {
    this.logger.warn(
      `A RateLimitedError held ${this.own.keys.queue}, but its hold did not reach the queue's other ` +
        `partitions (${what}: ${(error as Error).message}); each is held when its own handlers are limited`,
    );
    return undefined;
  }
}
