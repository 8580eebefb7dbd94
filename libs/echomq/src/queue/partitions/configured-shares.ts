import type { LoggerService } from '@nestjs/common';
import { parsePhysicalQueue } from '../../keyspace';
import type { FlowLimits } from '../../scripts/set-limits';
import { describeLimit } from '../flow-limits';
import { limitTargets, type PartitionLayout } from './partition-layout';
import { partitionLimits, tooSmallToSplit } from './partition-limits';

/**
 * The share of a queue's configured limits that one of its physical queues is given when it is
 * registered. The count the limits are split over may come from another process (the
 * registry), so a limit too small for it must never stop this process: each share is then 1,
 * and a warning, once per queue and limit, says that the queue's total is above what this
 * process configures. (An admin's setLimits refuses such a value instead: it is explicit input.)
 */
export class ConfiguredShares {
  /** What was warned about: bounded by the configured queues, their limits and counts (at most 16). */
  private readonly warned = new Set<string>();

  constructor(private readonly logger: Pick<LoggerService, 'warn'>) {}

  /**
   * `limits` (the queue's, as configured here) split for `physical`, a physical queue of
   * `layout` (this process's last known layout of its queue).
   */
  shareOf(physical: string, layout: PartitionLayout, limits: Partial<FlowLimits>): Partial<FlowLimits> {
    const targets = limitTargets(layout);
    let index = targets.indexOf(physical);
    let count = targets.length;
    const partition = parsePhysicalQueue(physical)?.partition;
    if (index < 0 && partition === undefined) {
      // The queue itself while partitioned: its old jobs drain under the limits it had, so the
      // split limits are left in Redis as they are.
      const { globalConcurrency: _gc, rateLimit: _rate, ...unsplit } = limits;
      return unsplit;
    }
    if (index < 0) {
      // A partition outside the layout known here (one it learns of later): placed where a
      // layout spanning it would put it.
      index = partition!;
      count = Math.max(count, index + 1);
    }
    if (count <= 1) return limits;
    for (const name of tooSmallToSplit(limits, count)) this.warnOnce(layout.queue, name, limits, count);
    return partitionLimits(limits, index, count, 'clamp');
  }

  private warnOnce(
    queue: string,
    name: 'globalConcurrency' | 'rateLimit.max',
    limits: Partial<FlowLimits>,
    count: number,
  ): void {
    const configured = name === 'globalConcurrency' ? limits.globalConcurrency : limits.rateLimit;
    const said = `${queue} ${name} ${describeLimit(configured)} ${count}`;
    if (this.warned.has(said)) return;
    this.warned.add(said);
    const total = name === 'globalConcurrency' ? `${count}` : `${count} per ${limits.rateLimit?.windowMs} ms`;
    this.logger.warn(
      `Queue ${queue}: the configured ${name === 'globalConcurrency' ? name : 'rateLimit'} ` +
        `${describeLimit(configured)} cannot be split over its ${count} partitions, ` +
        `each of which enforces at least 1: the queue's total is ${total}, above ` +
        'the configured value. Configure at least as many, or fewer partitions',
    );
  }
}
