import { JobNotFoundError } from '../../errors';
import type { JobId } from '../../ids';
import { parsePhysicalQueue } from '../../keyspace';
import type { ResolvedModuleSettings } from '../../module/echomq-options';
import type { ScriptContext } from '../../scripts';
import type { RepeatOptions } from '../../scripts/repeat';
import type { QueueDefinitions } from '../queue-definitions';
import type { QueueOptions, ResolvedQueueOptions } from '../queue-options';
import { candidatesForId, type PartitionLayout } from '../partitions/partition-layout';

/**
 * What every part of QueueService's surface stands on. QueueService is one injectable, but its
 * methods live in layers, one file per area (flow control, history, job control, schedules),
 * each a class extending the one below; QueueService, at the top, supplies these members.
 */
export abstract class QueueSurface {
  abstract readonly settings: ResolvedModuleSettings;

  /** @internal Script context of one queue (validates the name). */
  abstract context(queue: string): ScriptContext;

  /** The settings this process serves a queue with (see QueueService.queueOptions). */
  abstract queueOptions(queue: string, overrides?: QueueOptions): ResolvedQueueOptions;

  /** How long an admin call whose reply was lost is repeated under its request id. */
  protected abstract repeatOnce(): RepeatOptions;

  /**
   * Mints job ids on this process's leased node number (waits, boundedly, while it is confirmed);
   * `tag`: the partition index they carry.
   */
  protected abstract mintIds(count: number, tag?: number): Promise<JobId[]>;

  /** Where the queue's jobs live (see QueueService.partitionLayout); checks the name. */
  abstract partitionLayout(queue: string): Promise<PartitionLayout>;

  /**
   * The layout for a write that creates work: a partition named directly must be one its queue
   * has, else InvalidArgumentError before anything is sent (see PartitionDirectory.writeLayout).
   */
  protected abstract writeLayout(queue: string): Promise<PartitionLayout>;

  /** Registers the queue when this process has not lately (before a write that creates work). */
  protected abstract registerIfDue(queue: string): Promise<void>;

  /** Forgets that this process registered the queue, so its next write registers it again (after obliterate). */
  protected abstract forgetRegistration(queue: string): void;

  /** Removes a queue's entry from the partitions registry: every physical queue of it is gone (obliterate). */
  protected abstract forgetPartitions(queue: string): Promise<void>;

  /** The typed definitions this application declared (their data schemas apply to new jobs). */
  protected abstract readonly definitions: QueueDefinitions;

  /** The script contexts of every physical queue of `queue` (one for an unpartitioned queue). */
  protected async contextsOf(queue: string): Promise<ScriptContext[]> {
    return this.contextsIn(await this.partitionLayout(queue));
  }

  protected contextsIn(layout: PartitionLayout): ScriptContext[] {
    return layout.physical.map((physical) => this.context(physical));
  }

  /**
   * Runs `call` where job `id` lives: in the likelier of the two physical queues that may hold
   * it (the partition its id names, the queue itself; see candidatesForId), then, when the job
   * is not found there (JobNotFoundError), in the other. One call for an unpartitioned queue,
   * never more than two.
   */
  protected async onJob<T>(queue: string, id: JobId, call: (ctx: ScriptContext) => Promise<T>): Promise<T> {
    const candidates = candidatesForId(await this.partitionLayout(queue), id);
    for (let index = 0; ; index++) {
      try {
        return await call(this.context(candidates[index]));
      } catch (error) {
        if (index + 1 >= candidates.length || !(error instanceof JobNotFoundError)) throw error;
      }
    }
  }

  /** The partition index ids minted for `physical` carry (none for an unpartitioned queue). */
  protected tagOf(physical: string): number | undefined {
    return parsePhysicalQueue(physical)?.partition;
  }
}
