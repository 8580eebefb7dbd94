import type { Logger } from '@nestjs/common';
import { isTransientRedisError, ProcessorDefinitionError } from '../errors';
import { onceReachable } from '../connection/once-reachable';
import type { ScheduleSurface } from '../queue/surfaces/schedule-surface';
import type { ScheduleMetadata } from './schedule.decorator';
import type { DeclaredSchedule } from './schedule-types';

/** Chunks of the boot sweep per queue: enough for 100,000 schedules, each chunk bounded. */
const BOOT_SWEEP_CHUNKS = 1_000;

/**
 * The schedules an application declares (module option `schedules`, @Schedule on processors),
 * upserted at every boot. Upserting an unchanged schedule writes nothing, so every process of
 * a fleet may do it; the last definition booted wins when two differ.
 */
export class DeclaredSchedules {
  private readonly entries = new Map<string, DeclaredSchedule>();

  constructor(moduleSchedules: readonly DeclaredSchedule[] = []) {
    for (const entry of moduleSchedules) this.add(entry, 'the module option schedules');
  }

  get size(): number {
    return this.entries.size;
  }

  /** Adds the @Schedule declarations of one processor (class or method); a key declared twice is refused. */
  addDeclarations(
    queue: string,
    declared: readonly ScheduleMetadata[],
    where: string,
    defaultName = '',
  ): void {
    for (const { key, declaration } of declared) {
      const { data, name, ...spec } = declaration;
      const jobName = name ?? defaultName;
      this.add(
        { ...spec, queue, key, template: { data, ...(jobName === '' ? {} : { name: jobName }) } },
        where,
      );
    }
  }

  private add(entry: DeclaredSchedule, where: string): void {
    const id = `${entry.queue}\u0000${entry.key}`;
    if (this.entries.has(id)) {
      throw new ProcessorDefinitionError(
        `Schedule '${entry.key}' of queue '${entry.queue}' is declared twice (again in ${where}); keep one`,
      );
    }
    this.entries.set(id, entry);
  }

  /**
   * Upserts every declared schedule. An error Redis is unreachable for is logged and the
   * upsert repeated in the background until Redis answers (the boot goes on); any other error
   * (a payload over the limit, a data format this process does not know) stops the boot.
   */
  async upsertAll(queues: ScheduleSurface, logger: Logger, abort: AbortSignal): Promise<void> {
    for (const entry of this.entries.values()) {
      const { queue, key, template, ...spec } = entry;
      const upsert = async (): Promise<void> => {
        await queues.upsertSchedule(queue, key, spec, template);
      };
      try {
        await upsert();
      } catch (error) {
        if (!isTransientRedisError(error)) throw error;
        logger.warn(
          `Schedule ${key} of queue ${queue}: ${(error as Error).message}; upserting once Redis answers`,
        );
        void onceReachable(upsert, abort).catch((late: unknown) =>
          logger.error(`Schedule ${key} of queue ${queue} was not upserted: ${(late as Error).message}`),
        );
      }
    }
  }

  /**
   * Before a worker's claim loops start: one full sweep of each served queue, so a 'skip'
   * schedule's occurrence that went overdue while no worker ran is replaced, not run.
   */
  static async sweepBeforeClaiming(
    queues: ScheduleSurface,
    served: readonly string[],
    logger: Logger,
  ): Promise<void> {
    for (const queue of served) {
      try {
        const { skipped } = await queues.sweepSchedules(queue, BOOT_SWEEP_CHUNKS);
        if (skipped > 0) logger.log(`Skipped ${skipped} overdue schedule occurrence(s) of queue ${queue}`);
      } catch (error) {
        logger.warn(`Schedules of queue ${queue} were not swept at boot: ${(error as Error).message}`);
      }
    }
  }
}
