import type { INestApplicationContext } from '@nestjs/common';
import { InvalidArgumentError } from '../errors';
import { compareIds, type JobId } from '../ids';
import type { StateSet } from '../keyspace';
import type { JobView } from '../queue/job-view';
import { queueNameOf, type InputOf, type QueueRef, type ResultOf } from '../queue/queue-definition';
import { QueueService } from '../queue/queue.service';
import { ProcessorExplorer } from '../worker/processor-explorer';
import { expectSome } from './expectation';
import { readJobs, readJobsById } from './job-reads';
import { mismatchOf, type JobMatch } from './job-match';
import { runUntilIdle, type RunUntilIdleOptions } from './run-until-idle';
import type { RunSummary } from './run-tally';

/** Completed ids remembered per queue, for completed(): the newest are kept. */
const REMEMBERED_MAX = 10_000;

const WAITING: readonly StateSet[] = ['pending', 'schedule'];

/** A job of queue Q as the kit returns it: typed by Q's definition, unknown for a queue given by name. */
type ViewOf<Q> = JobView<InputOf<Q>, ResultOf<Q>>;
type MatchOf<Q> = JobMatch<InputOf<Q>, ResultOf<Q>>;

/**
 * Runs and inspects the queues of one Nest application in a test: runUntilIdle() runs
 * enqueued jobs on demand; enqueued(), dead() and completed() read jobs; the expect*
 * methods throw a JobExpectationError that lists what the queue held instead. Queues
 * are given by name or by their definition (defineQueue), whose data and result types
 * then flow into the views and summaries. Works with any test runner.
 */
export class EchoMqTestKit {
  private readonly completedIds = new Map<string, JobId[]>();
  private readonly running = new Set<string>();

  private constructor(
    /** The application's QueueService, to enqueue and read as the application does. */
    readonly queues: QueueService,
    private readonly explorer: ProcessorExplorer,
  ) {}

  /** The kit of an application (or testing module) that imports EchoMqModule. */
  static from(app: INestApplicationContext): EchoMqTestKit {
    let queues: QueueService;
    let explorer: ProcessorExplorer;
    try {
      queues = app.get(QueueService);
      explorer = app.get(ProcessorExplorer);
    } catch {
      throw new InvalidArgumentError('EchoMqTestKit.from(app): the application does not import EchoMqModule');
    }
    return new EchoMqTestKit(queues, explorer);
  }

  /**
   * Runs the queue's jobs in this application until none is pending or active (and no
   * handler that outlived its timeout is still running), then resolves with what happened. With `startProcessors: false` the queue's processor claims
   * only during this call; otherwise the call waits for the running processor. Jobs in
   * schedule (delayed, or waiting out a retry's backoff) are left there unless
   * `includeDelayed` makes them due at once. Rejects with RunTimeoutError after `timeoutMs`
   * (default 4,000 ms), having released the jobs still running; with InvalidArgumentError
   * when no @Processor of this application serves the queue.
   */
  async runUntilIdle<Q extends QueueRef>(
    queue: Q,
    options?: RunUntilIdleOptions,
  ): Promise<RunSummary<ResultOf<Q>>> {
    const name = queueNameOf(queue);
    if (this.running.has(name)) {
      throw new InvalidArgumentError(`runUntilIdle('${name}') is already running; await it first`);
    }
    this.running.add(name);
    try {
      const summary = await runUntilIdle<ResultOf<Q>>(
        { queues: this.queues, explorer: this.explorer },
        name,
        options,
      );
      this.remember(name, summary);
      return summary;
    } finally {
      this.running.delete(name);
    }
  }

  /** The jobs waiting in the queue (pending, or scheduled for later), oldest first, that match. */
  async enqueued<Q extends QueueRef>(queue: Q, match?: MatchOf<Q>): Promise<ViewOf<Q>[]> {
    return this.matching(queueNameOf(queue), WAITING, match);
  }

  /** The waiting jobs that match; throws JobExpectationError listing the waiting jobs when none does. */
  async expectEnqueued<Q extends QueueRef>(queue: Q, match: MatchOf<Q>): Promise<ViewOf<Q>[]> {
    const name = queueNameOf(queue);
    const all = await readJobs<InputOf<Q>, ResultOf<Q>>(this.queues, name, WAITING);
    return expectSome(`expectEnqueued('${name}')`, 'pending or scheduled', all, match);
  }

  /** The jobs in the queue's dead set (attempts used up, or unrecoverable), oldest first, that match. */
  async dead<Q extends QueueRef>(queue: Q, match?: MatchOf<Q>): Promise<ViewOf<Q>[]> {
    return this.matching(queueNameOf(queue), ['dead'], match);
  }

  /** The dead jobs that match; throws JobExpectationError listing the dead jobs when none does. */
  async expectDead<Q extends QueueRef>(queue: Q, match: MatchOf<Q>): Promise<ViewOf<Q>[]> {
    const name = queueNameOf(queue);
    const all = await readJobs<InputOf<Q>, ResultOf<Q>>(this.queues, name, ['dead']);
    return expectSome(`expectDead('${name}')`, 'dead', all, match);
  }

  /**
   * The jobs this kit's runs completed whose rows are still kept, oldest first, that
   * match. A completed job keeps its row only when its queue retains results
   * (`retainCompletedMs` above 0); otherwise only the run's summary records it.
   */
  async completed<Q extends QueueRef>(queue: Q, match?: MatchOf<Q>): Promise<ViewOf<Q>[]> {
    const name = queueNameOf(queue);
    const views = await this.completedViews<InputOf<Q>, ResultOf<Q>>(name);
    return views.filter((view) => mismatchOf(view, match) === undefined);
  }

  /** The completed jobs that match (see completed()); throws JobExpectationError when none does. */
  async expectCompleted<Q extends QueueRef>(queue: Q, match: MatchOf<Q>): Promise<ViewOf<Q>[]> {
    const name = queueNameOf(queue);
    const views = await this.completedViews<InputOf<Q>, ResultOf<Q>>(name);
    const ran = this.completedIds.get(name)?.length ?? 0;
    const unkept = ran - views.length;
    const note =
      unkept > 0
        ? `${unkept} more completed in runUntilIdle, but their rows were not kept: set retainCompletedMs to match on them.`
        : undefined;
    return expectSome(`expectCompleted('${name}')`, 'completed', views, match, note);
  }

  private async matching<D, R>(
    queue: string,
    states: readonly StateSet[],
    match: JobMatch<D, R> | undefined,
  ): Promise<JobView<D, R>[]> {
    const views = await readJobs<D, R>(this.queues, queue, states);
    return views.filter((view) => mismatchOf(view, match) === undefined);
  }

  private async completedViews<D, R>(queue: string): Promise<JobView<D, R>[]> {
    const ids = this.completedIds.get(queue) ?? [];
    const views = await readJobsById<D, R>(this.queues, queue, ids);
    // Oldest first, as documented: ids were remembered as the jobs completed, which the
    // partitions of a partitioned queue (and concurrent handlers) do in any order.
    return views.filter((view) => view.state === 'completed').sort((a, b) => compareIds(a.id, b.id));
  }

  private remember(queue: string, summary: RunSummary<unknown>): void {
    const ids = this.completedIds.get(queue) ?? [];
    for (const outcome of summary.outcomes) if (outcome.outcome === 'completed') ids.push(outcome.id);
    this.completedIds.set(queue, ids.slice(-REMEMBERED_MAX));
  }
}
