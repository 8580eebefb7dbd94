import { InvalidArgumentError } from '../errors';
import { SCRIPT_BATCH_MAX } from './limits';

/**
 * How a doctor script runs: 'check' reports what it finds and writes nothing; 'repair' also
 * mends it, in the same call, so what it reports is what it mended.
 */
export type RepairMode = 'check' | 'repair';

/** The script's first argument; anything else is refused before a command is sent. */
export function modeArg(mode: RepairMode): number {
  if (mode !== 'check' && mode !== 'repair') {
    throw new InvalidArgumentError(`mode must be 'check' or 'repair', got ${String(mode)}`);
  }
  return mode === 'repair' ? 1 : 0;
}

/** A batch handed to one doctor script: 1 to SCRIPT_BATCH_MAX items (checked before sending). */
export function assertBatch(items: readonly unknown[], what: string): void {
  if (items.length < 1 || items.length > SCRIPT_BATCH_MAX) {
    throw new InvalidArgumentError(`${what}: 1 to ${SCRIPT_BATCH_MAX} per call, got ${items.length}`);
  }
}
