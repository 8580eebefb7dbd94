import {
  limitOf,
  recentCompleted,
  type RecentCompletedOptions,
  type RecentCompletion,
} from '../recent-completed';
import { newestCompletions } from '../partitions/partition-merge';
import { FlowSurface } from './flow-surface';

/** QueueService's reads of what happened: recently completed jobs (from the event stream). */
export abstract class HistorySurface extends FlowSurface {
  /**
   * Recently completed jobs of the queue, newest first: up to `limit` (1 to 1,000, default 100),
   * read from the capped event stream, so only as far back as it reaches (docs/retention.md).
   * A result comes with a job when its event carried it (results up to 1 KiB). Throws
   * InvalidArgumentError for a bad limit before anything is sent.
   */
  async recentCompleted(queue: string, options: RecentCompletedOptions = {}): Promise<RecentCompletion[]> {
    const contexts = await this.contextsOf(queue);
    if (contexts.length === 1) return recentCompleted(contexts[0], options);
    const limit = limitOf(options);
    const lists = await Promise.all(contexts.map((ctx) => recentCompleted(ctx, options)));
    return newestCompletions(lists, limit);
  }
}
