import type { LoggerService } from '@nestjs/common';
import { DataFormatError } from '../errors';
import { knownFormat } from '../queue/data-format';

/**
 * Keeps the reaper off queues written in a format newer than this code knows. The reaper
 * walks every registered queue, also ones this process does not serve, so the check a
 * worker's boot makes does not cover them. The format is read by the reaper's look itself
 * (the deadlines script returns it), so the check costs no command; a refused queue is said
 * once as a warning and left alone until a reading says otherwise.
 */
export class FormatGate {
  private readonly refused = new Set<string>();

  constructor(private readonly logger: LoggerService) {}

  /** Whether the reaper may run its scripts on `queue`, whose recorded format is `format` (null: none yet). */
  admits(queue: string, format: string | null): boolean {
    try {
      if (format !== null) knownFormat(queue, format);
      this.refused.delete(queue);
      return true;
    } catch (error) {
      if (!(error instanceof DataFormatError)) throw error;
      if (!this.refused.has(queue)) this.logger.warn(`Reaper leaves queue ${queue} alone: ${error.message}`);
      this.refused.add(queue);
      return false;
    }
  }

  /** Forgets queues that left the registry, so the maps follow what is live. */
  forget(queue: string): void {
    this.refused.delete(queue);
  }
}
