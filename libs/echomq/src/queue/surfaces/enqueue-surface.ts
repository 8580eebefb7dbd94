import type { JobId } from '../../ids';
import type { EnqueueResult } from '../dedupe-options';
import { checkEnqueueOptions, type EnqueueOptions, type JobToEnqueue } from '../enqueue-options';
import type { Enqueuer } from '../enqueuer';
import { planEnqueue, targetFor } from '../partitions/enqueue-plan';
import { RoundRobin } from '../partitions/partition-routing';
import { EventSurface } from './event-surface';

/**
 * QueueService's enqueue calls. Of a partitioned queue (docs/partitions.md) each job goes to the
 * partition its lane or key pins it to, else to the next in turn (queue/partitions/enqueue-plan.ts).
 */
export abstract class EnqueueSurface extends EventSurface {
  /** Unpinned jobs of partitioned queues take the partitions in turn. */
  private readonly turns = new RoundRobin();

  /** Checks, mints, registers and batches (see Enqueuer). */
  protected abstract readonly enqueuer: Enqueuer;

  /**
   * Enqueues one job and returns the id of the job that will run: its own, or, for an
   * idempotency key, debounce or throttle that matched, the existing job's (submit says which).
   */
  async enqueue<T>(queue: string, data: T, options: EnqueueOptions = {}): Promise<JobId> {
    // One job is what submit enqueues, without the batch an enqueueMany would make of it.
    return (await this.submit(queue, data, options)).id;
  }

  /**
   * Enqueues one job and says what that did: `created` a job, `matched` an existing one (its
   * idempotency key or throttle window held one), or `replaced` the data of a waiting debounced
   * job and pushed its run-at back. `id` is the job that will run. Options are checked like
   * enqueue's, as InvalidArgumentError before anything is sent (docs/deduplication.md).
   */
  async submit<T>(queue: string, data: T, options: EnqueueOptions = {}): Promise<EnqueueResult> {
    checkEnqueueOptions(options);
    const target = targetFor(await this.writeLayout(queue), options, this.turns);
    // The repeat window is taken only by a keyed job, the one kind whose call is repeated here.
    return this.enqueuer.submit(
      this.context(target.queue),
      { ...options, data },
      () => this.repeatOnce(),
      target.tag,
    );
  }

  /**
   * Enqueues every job in one script call, all or nothing. Ids come back in input order.
   * At most ENQUEUE_MANY_MAX jobs and ENQUEUE_CALL_MAX_BYTES of payload: one script call
   * blocks Redis while it runs, so a larger batch is refused before anything is sent.
   */
  async enqueueMany<T>(queue: string, jobs: readonly JobToEnqueue<T>[]): Promise<JobId[]> {
    const layout = await this.writeLayout(queue);
    // Of a partitioned queue, each partition's jobs are one all-or-nothing call (enqueue-plan.ts).
    const plan = planEnqueue(layout, jobs instanceof Array ? jobs : [], this.turns);
    const groups = plan.map(({ target, items }) => ({
      ctx: this.context(target.queue),
      tag: target.tag,
      items,
    }));
    return this.enqueuer.enqueueMany(layout.queue, jobs, groups);
  }
}
