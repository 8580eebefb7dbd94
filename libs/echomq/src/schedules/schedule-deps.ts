import type { JobId } from '../ids';
import type { RepeatOptions } from '../scripts/repeat';

/** What the schedule operations need from QueueService (its surface passes them in). */
export interface ScheduleDeps {
  /** Mints occurrence ids on this process's node number, carrying the partition index of `queue` (a partition's name). */
  mintIds(count: number, queue: string): Promise<JobId[]>;
  /** How long a write whose reply was lost is repeated under its request id. */
  repeat(): RepeatOptions;
  /** Registers the queue when this process has not lately (a write that creates work). */
  registerIfDue(queue: string): Promise<void>;
  readonly payloadLimitBytes: number;
  /** Whether the module option `tracing` is on: an upsert is then a publish span whose context its occurrences carry. */
  readonly tracing?: boolean;
}
