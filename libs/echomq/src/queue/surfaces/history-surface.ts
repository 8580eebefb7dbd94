import { recentCompleted, type RecentCompletedOptions, type RecentCompletion } from '../recent-completed';
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
    return recentCompleted(this.context(queue), options);
  }
}
