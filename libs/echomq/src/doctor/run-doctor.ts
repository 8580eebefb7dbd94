import { DataFormatError } from '../errors';
import type { ScriptContext } from '../scripts';
import { diagnoseQueue, type QueueDiagnosis } from './diagnose';
import type { Unchecked } from './findings';
import { resolveDoctorOptions, type DoctorOptions } from './options';
import { NOT_CHECKABLE } from './unchecked';

export interface DoctorReport {
  readonly repair: boolean;
  readonly queues: QueueDiagnosis[];
  /** What no look at stored state can check (see NOT_CHECKABLE). */
  readonly unchecked: readonly Unchecked[];
  /** True when every queue was checked (none left alone as a whole: see QueueDiagnosis.checked). */
  readonly complete: boolean;
  /** True when every queue was checked and nothing was found, or everything found was repaired. */
  readonly healthy: boolean;
}

/** A queue left alone as a whole, and why: nothing of it was read or written. */
export interface SkippedQueue {
  readonly queue: string;
  readonly reason: string;
}

/** The diagnosis of a queue that was not looked at. */
export function skippedDiagnosis({ queue, reason }: SkippedQueue): QueueDiagnosis {
  return {
    queue,
    checked: false,
    findings: [],
    scanned: { members: 0, rows: 0, laneSets: 0 },
    unchecked: [{ check: 'every check', reason }],
  };
}

/** Whether nothing is left unrepaired in `queues`. */
export function nothingLeft(queues: readonly QueueDiagnosis[]): boolean {
  return queues.every((queue) => queue.findings.every((finding) => finding.repaired >= finding.count));
}

/**
 * Diagnoses each queue in turn (see diagnoseQueue) and says whether all of them are healthy. A
 * queue written in a data format this code does not know is left alone (nothing read or written)
 * and listed as not checked, as are the `skipped` ones (names the caller could not check, such as
 * a registry entry that is no queue name), so one queue does not stop the look at the others; a
 * report with such a queue is not complete, and so not healthy.
 */
export async function runDoctor(
  contexts: readonly ScriptContext[],
  options: DoctorOptions = {},
  skipped: readonly SkippedQueue[] = [],
): Promise<DoctorReport> {
  resolveDoctorOptions(options);
  const queues: QueueDiagnosis[] = [];
  for (const ctx of contexts) {
    try {
      queues.push(await diagnoseQueue(ctx, options));
    } catch (error) {
      if (!(error instanceof DataFormatError)) throw error;
      queues.push(skippedDiagnosis({ queue: ctx.keys.queue, reason: error.message }));
    }
  }
  queues.push(...skipped.map(skippedDiagnosis));
  const complete = queues.every((queue) => queue.checked);
  return {
    repair: options.repair === true,
    queues,
    unchecked: NOT_CHECKABLE,
    complete,
    healthy: complete && nothingLeft(queues),
  };
}
