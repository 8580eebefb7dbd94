import { checkJobData } from '../check-job-data';
import { advanceSchedule, type AdvanceOutcome } from '../../schedules/advance-schedule';
import { removeSchedule } from '../../schedules/remove-schedule';
import type { ScheduleDeps } from '../../schedules/schedule-deps';
import { getSchedule, listSchedules, SCHEDULE_LIST_DEFAULT } from '../../schedules/schedule-reads';
import { ScheduleSweeper, type SweepResult } from '../../schedules/schedule-sweep';
import type {
  ScheduleListOptions,
  ScheduleOptions,
  ScheduleSpec,
  ScheduleTemplate,
  ScheduleView,
  UpsertScheduleResult,
} from '../../schedules/schedule-types';
import { upsertSchedule } from '../../schedules/upsert-schedule';
import { JobControlSurface } from './job-control-surface';
import { logicalQueueOf, partitionQueueName } from '../../keyspace';
import type { ScriptContext } from '../../scripts';
import { assertScheduleKey } from '../../schedules/schedule-definition';
import type { PartitionLayout } from '../partitions/partition-layout';
import { schedulePartition } from '../partitions/enqueue-plan';

/** QueueService's schedules: upsert, remove and list cron and interval schedulers (docs/schedules.md). */
export abstract class ScheduleSurface extends JobControlSurface {
  private readonly sweeper = new ScheduleSweeper((ctx, key, expected, replace) =>
    advanceSchedule(ctx, key, expected, this.scheduleDeps(), replace),
  );

  /**
   * Creates or changes the schedule `key` of a queue: a cron pattern in a time zone
   * (`{ cron, tz }`, tz default 'UTC') or an interval (`{ everyMs }`), with its missed-run
   * policy, and the template every occurrence (an ordinary job in the schedule set) is made
   * from. The schedule has exactly one next occurrence whatever the processes and races:
   * upserting the same definition again is 'unchanged', a change replaces the waiting
   * occurrence (keeping its run-at when the timing is the same). While a run is in progress
   * (pending or claimed), only the definition is written; that run's advance uses it.
   * Bad input throws InvalidArgumentError before anything is sent.
   */
  async upsertSchedule<T>(
    queue: string,
    key: string,
    spec: ScheduleSpec & ScheduleOptions,
    template?: ScheduleTemplate<T>,
  ): Promise<UpsertScheduleResult> {
    const layout = await this.writeLayout(queue);
    // A partition named directly (emails#2) has its queue's schema.
    const schema = this.definitions.get(logicalQueueOf(queue))?.schemas.data;
    if (schema) await checkJobData(queue, schema, [{ data: template?.data }]);
    const ctx = await this.scheduleHome(layout, key, template);
    return upsertSchedule(ctx, key, spec, template, this.scheduleDeps());
  }

  /**
   * The partition a schedule lives in, where its occurrences are made: where it already is (so
   * a changed partition count never gives one key two schedules); a new one, in its template's
   * lane's partition when it names a lane, else in the one its key hashes to (schedulePartition).
   * An existing schedule stays where it is even when an upsert changes its template's lane: its
   * occurrences then run in that lane from the schedule's partition, which may not be the one
   * the lane's other jobs go to, so the lane's order and caps hold for each part separately
   * (remove the schedule and create it again to move it to the lane's partition).
   */
  private async scheduleHome(
    layout: PartitionLayout,
    key: string,
    template: unknown,
  ): Promise<ScriptContext> {
    if (!layout.partitioned) return this.context(layout.queue);
    assertScheduleKey(key);
    const contexts = this.contextsIn(layout);
    const found = await Promise.all(contexts.map((ctx) => getSchedule(ctx, key)));
    const at = found.findIndex((view) => view !== undefined);
    if (at >= 0) return contexts[at];
    const target =
      layout.count <= 1
        ? layout.queue
        : partitionQueueName(layout.queue, schedulePartition(key, template, layout.count));
    return this.context(target);
  }

  /**
   * Removes a schedule and its next occurrence while that waits (scheduled or pending); one
   * already running finishes. False when there was no such schedule.
   */
  async removeSchedule(queue: string, key: string): Promise<boolean> {
    const contexts = await this.contextsOf(queue);
    // Of a partitioned queue, from every partition (one holds it).
    const removed = await Promise.all(contexts.map((ctx) => removeSchedule(ctx, key, this.repeatOnce())));
    return removed.some(Boolean);
  }

  /** The queue's schedules by key, a page at a time (`after` the last key seen; limit 1 to 1,000, default 100). */
  async listSchedules<T = unknown>(queue: string, options?: ScheduleListOptions): Promise<ScheduleView<T>[]> {
    const contexts = await this.contextsOf(queue);
    const pages = await Promise.all(contexts.map((ctx) => listSchedules<T>(ctx, options)));
    if (pages.length === 1) return pages[0];
    // The merged page is as long as one partition's would be (the options were checked above).
    const limit = options?.limit ?? SCHEDULE_LIST_DEFAULT;
    return pages
      .flat()
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, limit);
  }

  /** One schedule with its next occurrence, or undefined when there is none by that key. */
  async getSchedule<T = unknown>(queue: string, key: string): Promise<ScheduleView<T> | undefined> {
    const contexts = await this.contextsOf(queue);
    const found = await Promise.all(contexts.map((ctx) => getSchedule<T>(ctx, key)));
    return found.find((view) => view !== undefined);
  }

  /**
   * @internal For the worker runtime; no stability promise.
   * Moves a schedule on from its next occurrence `expectedId` once a worker claimed it (active,
   * retrying, dead, finished) or it is gone; never from a pending one. With `replace`, drops it
   * unrun while it still waits ('skip'). `traceContext` is the claimed occurrence's (tracing on):
   * the next occurrence carries it even when the claimed one's row is gone before this reads it.
   */
  async advanceSchedule(
    queue: string,
    key: string,
    expectedId: string | null,
    replace = false,
    traceContext?: string,
  ): Promise<AdvanceOutcome> {
    return advanceSchedule(this.context(queue), key, expectedId, this.scheduleDeps(), replace, traceContext);
  }

  /**
   * @internal For the reaper and the boot of a worker; no stability promise.
   * One bounded pass of the schedule safety net over a queue (see ScheduleSweeper).
   */
  async sweepSchedules(queue: string, maxChunks: number): Promise<SweepResult> {
    return this.sweeper.sweep(this.context(queue), maxChunks);
  }

  private scheduleDeps(): ScheduleDeps {
    return {
      mintIds: (count, queue) => this.mintIds(count, this.tagOf(queue)),
      repeat: () => this.repeatOnce(),
      registerIfDue: (queue) => this.registerIfDue(queue),
      payloadLimitBytes: this.settings.maxPayloadBytes,
      tracing: this.settings.tracing,
    };
  }
}
