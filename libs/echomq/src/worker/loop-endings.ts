import type { Logger } from '@nestjs/common';
import type { LoopEnded } from './loop-report';

export type LoopEndedListener = (ended: LoopEnded) => void;

/**
 * Who hears that an error ended a claim loop (see ProcessorExplorer.onLoopEnded): the worker
 * host exits on it, so its supervisor restarts the process. A listener that throws is logged.
 */
export class LoopEndings {
  private readonly listeners = new Set<LoopEndedListener>();

  constructor(private readonly logger: Logger) {}

  /** Adds `listener`, and tells it at once of the loops that ended already; returns its removal. */
  subscribe(listener: LoopEndedListener, endedAlready: readonly LoopEnded[]): () => void {
    this.listeners.add(listener);
    for (const ended of endedAlready) this.call(listener, ended);
    return () => this.listeners.delete(listener);
  }

  tell(ended: LoopEnded): void {
    for (const listener of [...this.listeners]) this.call(listener, ended);
  }

  private call(listener: LoopEndedListener, ended: LoopEnded): void {
    try {
      listener(ended);
    } catch (error) {
      this.logger.error(`A loop-ended listener threw: ${(error as Error).message}`);
    }
  }
}
