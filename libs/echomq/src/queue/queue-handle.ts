import type { JobId } from '../ids';
import type { StateSet } from '../keyspace';
import type { RemovedFrom } from '../scripts/remove';
import type { LaneView } from '../scripts/lane-reads';
import type { FlowLimits } from '../scripts/set-limits';
import type { LaneSettings } from './flow-admin';
import type { QueueEventListener } from '../events/queue-event';
import type { EnqueueResult } from './dedupe-options';
import type { EnqueueOptions, JobToEnqueue } from './enqueue-options';
import type { JobView } from './job-view';
import type { InputOf, QueueDefinition, ResultOf } from './queue-definition';
import type { BrowseOptions, QueueCounts } from './reads';
import type { QueueService } from './queue.service';
import type { RecentCompletedOptions, RecentCompletion } from './recent-completed';
import type { CleanState } from '../scripts/clean';
import type { UpdatedJobState } from '../scripts/update-job';
import type { CleanOptions } from './job-control/clean-jobs';
import type { DrainOptions } from './job-control/drain-queue';
import type { ObliterateOptions } from './job-control/obliterate-queue';
import type { RetryAllOptions } from './job-control/retry-all-dead';
import type { JobPatch } from './job-control/update-patch';
import type {
  ScheduleListOptions,
  ScheduleOptions,
  ScheduleSpec,
  ScheduleTemplate,
  ScheduleView,
  UpsertScheduleResult,
} from '../schedules/schedule-types';

/**
 * One queue, typed by its definition: what producers inject (`@InjectQueue(Emails)`, after
 * `EchoMqModule.forFeature([Emails])`) or get from `QueueService.queue(Emails)`.
 *
 *   constructor(@InjectQueue(Emails) private readonly emails: QueueHandle<typeof Emails>) {}
 *   await this.emails.enqueue({ to: 'a@example.com' });   // data must be EmailData
 *
 * Payloads are typed as enqueued and stored (a data schema's input type, InputOf); the
 * handler receives the schema's output (DataOf).
 *
 * Every method is QueueService's, with the queue bound and the payload and result typed;
 * the data schema, if the definition has one, is checked at enqueue.
 */
export class QueueHandle<Q extends QueueDefinition<unknown, unknown, unknown>> {
  readonly name: string;

  constructor(
    readonly definition: Q,
    private readonly queues: QueueService,
  ) {
    this.name = definition.name;
  }

  enqueue(data: InputOf<Q>, options?: EnqueueOptions): Promise<JobId> {
    return this.queues.enqueue(this.name, data, options);
  }

  /** Enqueues one job and says whether it created, matched or replaced one (see QueueService.submit). */
  submit(data: InputOf<Q>, options?: EnqueueOptions): Promise<EnqueueResult> {
    return this.queues.submit(this.name, data, options);
  }

  enqueueMany(jobs: readonly JobToEnqueue<InputOf<Q>>[]): Promise<JobId[]> {
    return this.queues.enqueueMany(this.name, jobs);
  }

  getJob(id: string): Promise<JobView<InputOf<Q>, ResultOf<Q>> | undefined> {
    return this.queues.getJob(this.name, id) as Promise<JobView<InputOf<Q>, ResultOf<Q>> | undefined>;
  }

  /** Resolves with the job's result once it completes (typed by the definition); see QueueService.waitFor. */
  waitFor(id: string, timeoutMs?: number): Promise<ResultOf<Q>> {
    return this.queues.waitFor<ResultOf<Q>>(this.name, id, timeoutMs);
  }

  browse(state: StateSet, options?: BrowseOptions): Promise<JobId[]> {
    return this.queues.browse(this.name, state, options);
  }

  listJobs(state: StateSet, options?: BrowseOptions): Promise<JobView<InputOf<Q>, ResultOf<Q>>[]> {
    return this.queues.listJobs(this.name, state, options) as Promise<JobView<InputOf<Q>, ResultOf<Q>>[]>;
  }

  counts(): Promise<QueueCounts> {
    return this.queues.counts(this.name);
  }

  metrics(): Promise<Record<string, number>> {
    return this.queues.metrics(this.name);
  }

  retry(id: string): Promise<void> {
    return this.queues.retry(this.name, id);
  }

  remove(id: string): Promise<RemovedFrom> {
    return this.queues.remove(this.name, id);
  }

  pause(): Promise<void> {
    return this.queues.pause(this.name);
  }

  resume(): Promise<void> {
    return this.queues.resume(this.name);
  }

  isPaused(): Promise<boolean> {
    return this.queues.isPaused(this.name);
  }

  setLimits(limits: Partial<FlowLimits>): Promise<void> {
    return this.queues.setLimits(this.name, limits);
  }

  getLimits(): Promise<FlowLimits> {
    return this.queues.getLimits(this.name);
  }

  /** Until when the queue is held back by a handler's RateLimitedError (Redis server clock), or null. */
  heldUntil(): Promise<Date | null> {
    return this.queues.heldUntil(this.name);
  }

  /** The lanes held back until an instant still ahead (a lane RateLimitedError or rate limit). */
  laneHolds(): Promise<Record<string, Date>> {
    return this.queues.laneHolds(this.name);
  }

  setLane(lane: string, settings: LaneSettings): Promise<void> {
    return this.queues.setLane(this.name, lane, settings);
  }

  pauseLane(lane: string): Promise<void> {
    return this.queues.pauseLane(this.name, lane);
  }

  resumeLane(lane: string): Promise<void> {
    return this.queues.resumeLane(this.name, lane);
  }

  lanes(): Promise<LaneView[]> {
    return this.queues.lanes(this.name);
  }

  subscribe(listener: QueueEventListener): Promise<() => void> {
    return this.queues.subscribe(this.name, listener);
  }

  /** The newest completions from the event stream, results typed by the definition (see QueueService.recentCompleted). */
  recentCompleted(
    options?: RecentCompletedOptions,
  ): Promise<(RecentCompletion & { result?: ResultOf<Q> })[]> {
    return this.queues.recentCompleted(this.name, options) as Promise<
      (RecentCompletion & { result?: ResultOf<Q> })[]
    >;
  }

  drain(options?: DrainOptions): Promise<number> {
    return this.queues.drain(this.name, options);
  }

  clean(state: CleanState, options: CleanOptions): Promise<JobId[]> {
    return this.queues.clean(this.name, state, options);
  }

  obliterate(options?: ObliterateOptions): Promise<{ removed: number }> {
    return this.queues.obliterate(this.name, options);
  }

  retryAll(options?: RetryAllOptions): Promise<number> {
    return this.queues.retryAll(this.name, options);
  }

  promote(id: string): Promise<void> {
    return this.queues.promote(this.name, id);
  }

  /** Changes a job that is not active; its new data must fit the definition. */
  update(
    id: string,
    patch: Omit<JobPatch, 'data'> & { readonly data?: InputOf<Q> },
  ): Promise<UpdatedJobState> {
    return this.queues.update(this.name, id, patch);
  }

  /** Creates or changes a schedule whose occurrences carry data of the definition's type. */
  upsertSchedule(
    key: string,
    spec: ScheduleSpec & ScheduleOptions,
    template?: ScheduleTemplate<InputOf<Q>>,
  ): Promise<UpsertScheduleResult> {
    return this.queues.upsertSchedule(this.name, key, spec, template);
  }

  removeSchedule(key: string): Promise<boolean> {
    return this.queues.removeSchedule(this.name, key);
  }

  listSchedules(options?: ScheduleListOptions): Promise<ScheduleView<InputOf<Q>>[]> {
    return this.queues.listSchedules<InputOf<Q>>(this.name, options);
  }

  getSchedule(key: string): Promise<ScheduleView<InputOf<Q>> | undefined> {
    return this.queues.getSchedule<InputOf<Q>>(this.name, key);
  }
}
