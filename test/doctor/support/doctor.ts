import type { Redis } from 'ioredis';
import { installScripts, queueKeys, type QueueKeys, type ScriptContext } from '@app/echomq/internal';
import type { DoctorReport } from '@app/echomq/doctor';
import { emq } from '../../cli/support/cli';

export interface DoctorRun {
  readonly code: number;
  readonly report: DoctorReport;
}

/** `emq doctor [queue] --json [flags]` in-process; the report as parsed from stdout. */
export async function doctor(
  prefix: string,
  queue: string | undefined,
  ...flags: string[]
): Promise<DoctorRun> {
  const result = await emq(prefix, ['doctor', ...(queue === undefined ? [] : [queue]), '--json', ...flags]);
  if (result.stderr !== '') throw new Error(`emq doctor wrote to stderr: ${result.stderr}`);
  return { code: result.code, report: JSON.parse(result.stdout) as DoctorReport };
}

/** The findings of a one-queue report as [kind, ids, details], for exact assertions. */
export function findingsOf(run: DoctorRun): [string, string[], string[]][] {
  return run.report.queues.flatMap((queue) =>
    queue.findings.map(
      (finding) => [finding.kind, finding.ids, finding.details] as [string, string[], string[]],
    ),
  );
}

/** A script context on a raw connection under a key prefix: how tests reach the scripts directly. */
export function prefixedContext(
  redis: Redis,
  queue: string,
  prefix: string,
): ScriptContext & { keys: QueueKeys } {
  return { redis: installScripts(redis), keys: queueKeys(queue, prefix), eventsMaxLen: 1000 };
}
