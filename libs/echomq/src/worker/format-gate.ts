import type { LoggerService } from '@nestjs/common';
import { DataFormatError } from '../errors';
import { checkDataFormat } from '../queue/data-format';
import type { ScriptContext } from '../scripts';

/** How long one format reading of a queue is trusted: a bump is taken up within this. */
const RECHECK_EVERY_MS = 60_000;

/**
 * Keeps the reaper off queues written in a format newer than this code knows. The reaper
 * walks every registered queue, also ones this process does not serve, so the check a
 * worker's boot makes does not cover them. One GET per queue per minute; a refused queue
 * is said once as a warning and left alone until a reading says otherwise.
 */
export class FormatGate {
  private readonly checkedAt = new Map<string, number>();
  private readonly refused = new Set<string>();

  constructor(private readonly logger: LoggerService) {}

  /** Whether the reaper may run its scripts on this queue now. */
  async allows(ctx: ScriptContext): Promise<boolean> {
    const queue = ctx.keys.queue;
    const at = this.checkedAt.get(queue);
    if (at !== undefined && Date.now() - at < RECHECK_EVERY_MS) return !this.refused.has(queue);
    try {
      await checkDataFormat(ctx);
      this.refused.delete(queue);
    } catch (error) {
      if (!(error instanceof DataFormatError)) throw error;
      if (!this.refused.has(queue)) this.logger.warn(`Reaper leaves queue ${queue} alone: ${error.message}`);
      this.refused.add(queue);
    }
    this.checkedAt.set(queue, Date.now());
    return !this.refused.has(queue);
  }

  /** Forgets queues that left the registry, so the maps follow what is live. */
  forget(queue: string): void {
    this.checkedAt.delete(queue);
    this.refused.delete(queue);
  }
}
