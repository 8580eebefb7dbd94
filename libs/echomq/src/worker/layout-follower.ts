import type { Logger } from '@nestjs/common';
import { warnUnlessUnreachable } from '../connection/warn-unless-unreachable';
import { isTransientRedisError } from '../errors';
import { PARTITIONS_REFRESH_MS } from '../queue/partitions/partition-directory';
import type { QueueService } from '../queue/queue.service';
import { DeclaredSchedules } from '../schedules/declared-schedules';
import type { PartitionLoops } from './partition-loops';
import { physicalQueuesToServe } from './served-partitions';

/**
 * Keeps each served queue's loops in step with its partition layout. At bootstrap (settle),
 * before any loop starts, the loops made at discovery from the declared count are completed
 * with what the partitions registry records (another process partitioned the queue, or it had
 * more partitions once), and the queue itself is dropped when it needs no loop. Then, every
 * PARTITIONS_REFRESH_MS while the application serves (and when the testing kit asks, see
 * cover), a physical queue that appeared since (the count was raised, jobs reached the queue
 * itself) gets its loop: registered (its data format checked), its schedules swept, then
 * started when the queue is claimed from here. A loop is never removed while the application
 * runs: a drained partition costs its blocked connection until the next boot.
 */
export class LayoutFollower {
  private timer?: NodeJS.Timeout;
  private pass?: Promise<void>;
  /** One cover of a group at a time: the watch and the testing kit may ask together. */
  private readonly covering = new Map<PartitionLoops, Promise<string[]>>();
  /** Physical queues Redis says this worker must not serve (a newer data format): said once, not tried again. */
  private readonly refused = new Set<string>();

  constructor(
    private readonly queues: QueueService,
    private readonly logger: Logger,
    /** Told of each loop added and registered after bootstrap (the reaper serves its queue too). */
    private readonly admitted: (group: PartitionLoops, physical: string) => void,
  ) {}

  /**
   * At bootstrap, before the loops start: the group gets a loop for every physical queue of the
   * layout, and loses the one on the queue itself if it needs none. When Redis cannot be asked,
   * the group stays as discovery made it, and the watch completes it once Redis answers.
   */
  async settle(group: PartitionLoops): Promise<void> {
    let wanted: string[];
    try {
      wanted = await physicalQueuesToServe(this.queues, group.queue);
    } catch (error) {
      warnUnlessUnreachable(
        this.logger,
        error,
        `The partitions of queue ${group.queue} could not be read at boot (${(error as Error).message}); ` +
          `serving ${group.physical.join(', ')} until they can`,
      );
      return;
    }
    for (const physical of wanted) group.add(physical);
    for (const physical of group.physical) if (!wanted.includes(physical)) group.drop(physical);
  }

  /** Adds the loops the group's layout gained since it was last looked at; returns their physical queues. */
  cover(group: PartitionLoops): Promise<string[]> {
    const running = this.covering.get(group);
    if (running) return running;
    const cover = this.coverNow(group).finally(() => this.covering.delete(group));
    this.covering.set(group, cover);
    return cover;
  }

  /** Looks at every serving group's layout every PARTITIONS_REFRESH_MS until stop(). */
  start(groups: () => Iterable<PartitionLoops>, everyMs = PARTITIONS_REFRESH_MS): void {
    clearInterval(this.timer);
    this.timer = setInterval(() => {
      this.pass ??= this.coverAll(groups()).finally(() => (this.pass = undefined));
    }, everyMs);
    this.timer.unref();
  }

  /** Stops the watch; resolves once a pass in progress is over. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.pass;
  }

  private async coverAll(groups: Iterable<PartitionLoops>): Promise<void> {
    for (const group of groups) {
      if (!group.serving) continue;
      try {
        await this.cover(group);
      } catch (error) {
        warnUnlessUnreachable(
          this.logger,
          error,
          `The partitions of queue ${group.queue} could not be read (${(error as Error).message}); looking again in a moment`,
        );
      }
    }
  }

  private async coverNow(group: PartitionLoops): Promise<string[]> {
    const wanted = await physicalQueuesToServe(this.queues, group.queue, (name) => group.has(name));
    const added: string[] = [];
    for (const physical of wanted) {
      if (group.has(physical) || this.refused.has(physical)) continue;
      if (await this.admit(group, physical)) added.push(physical);
    }
    return added;
  }

  /** Registers a new physical queue, sweeps its schedules, then gives it a loop (started if the queue is served). */
  private async admit(group: PartitionLoops, physical: string): Promise<boolean> {
    try {
      await this.queues.register(physical);
    } catch (error) {
      // Redis away: the next look tries again.
      if (isTransientRedisError(error)) return false;
      this.refused.add(physical);
      this.logger.error(`Not serving ${physical} of queue ${group.queue}: ${(error as Error).message}`);
      return false;
    }
    await DeclaredSchedules.sweepBeforeClaiming(this.queues, [physical], this.logger);
    if (group.closed) return false;
    group.add(physical);
    if (group.serving) group.startOne(physical);
    this.logger.log(`Serving ${physical} of queue ${group.queue} too: its partition layout changed`);
    this.admitted(group, physical);
    return true;
  }
}
