import type { Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { BOOT_RETRY_MS } from '../connection/once-reachable';
import { FullRedisNotice } from '../connection/full-redis-notice';
import { isTransientRedisError, ProcessorDefinitionError } from '../errors';
import { isOutOfMemoryReply } from '../scripts/reply-errors';
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
   * Upserts every declared schedule. One that Redis is unreachable for, or that a full Redis
   * refuses (maxmemory reached, noeviction: an upsert may write a new occurrence), does not
   * stop the boot: it is said (a full Redis once, for all of them) and the upsert repeated in
   * the background every BOOT_RETRY_MS until it goes through or the application shuts down.
   * Meanwhile the definition already stored, if any, goes on running. A worker whose declared
   * schedules are unchanged is not held up by a full Redis at all: an unchanged upsert writes
   * only its reply record, which a full Redis lets through. Any other error (a payload over
   * the limit, a data format this process does not know) stops the boot.
   */
  async upsertAll(queues: ScheduleSurface, logger: Logger, abort: AbortSignal): Promise<void> {
    const later: DeclaredSchedule[] = [];
    const fullRedis = new FullRedisNotice(logger, 'Declared schedules');
    for (const entry of this.entries.values()) {
      try {
        await upsertOne(queues, entry);
      } catch (error) {
        if (fullRedis.met(error, waitsForRoom(entry))) later.push(entry);
        else if (isTransientRedisError(error)) {
          later.push(entry);
          logger.warn(
            `Schedule ${entry.key} of queue ${entry.queue}: ${(error as Error).message}; upserting once Redis answers`,
          );
        } else throw error;
      }
    }
    if (later.length > 0) void upsertLater(queues, later, logger, fullRedis, abort);
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
        // A full Redis refuses the advances (each makes an occurrence); the reapers' sweep
        // does them once there is room.
        const then = isOutOfMemoryReply(error) ? '; the reapers sweep them once there is room' : '';
        logger.warn(`Schedules of queue ${queue} were not swept at boot: ${(error as Error).message}${then}`);
      }
    }
  }
}

async function upsertOne(queues: ScheduleSurface, entry: DeclaredSchedule): Promise<void> {
  const { queue, key, template, ...spec } = entry;
  await queues.upsertSchedule(queue, key, spec, template);
}

/** What the full-Redis warning says waits for room. */
function waitsForRoom(first: DeclaredSchedule): string {
  return (
    `Schedule ${first.key} of queue ${first.queue}, and any other declared schedule Redis refuses, is ` +
    `upserted once there is room (tried every ${BOOT_RETRY_MS / 1_000} s); the definition stored in ` +
    'Redis, if any, runs until then'
  );
}

/**
 * The background half of upsertAll: repeats the upserts left over, each until it goes
 * through (said at log level), while Redis is unreachable or full; drops one that fails
 * otherwise (said as an error: a restart with the same declaration fails its boot with it).
 */
async function upsertLater(
  queues: ScheduleSurface,
  left: DeclaredSchedule[],
  logger: Logger,
  fullRedis: FullRedisNotice,
  abort: AbortSignal,
): Promise<void> {
  while (left.length > 0 && !abort.aborted) {
    await sleep(BOOT_RETRY_MS, undefined, { signal: abort }).catch(() => undefined);
    let full = false;
    for (const entry of [...left]) {
      if (abort.aborted) return;
      const name = `Schedule ${entry.key} of queue ${entry.queue}`;
      try {
        await upsertOne(queues, entry);
        left.splice(left.indexOf(entry), 1);
        logger.log(`${name} is upserted`);
      } catch (error) {
        if (fullRedis.met(error, waitsForRoom(entry))) {
          full = true;
          continue;
        }
        if (isTransientRedisError(error)) continue;
        left.splice(left.indexOf(entry), 1);
        logger.error(`${name} was not upserted: ${(error as Error).message}`);
      }
    }
    if (!full) fullRedis.cleared();
  }
}
