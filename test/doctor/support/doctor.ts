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

/** Every key of one queue as Redis would restore it (DUMP) with its type and whether it expires. */
export type QueueDump = Record<string, { type: string; value: string; expires: boolean }>;

/**
 * A byte-exact picture of every key of a queue (found by SCAN of its base), for "wrote nothing"
 * assertions: any write to any of them (a member, a field, a counter, an event) changes it.
 */
export async function dumpQueue(redis: Redis, keys: QueueKeys): Promise<QueueDump> {
  const found = new Set<string>();
  let cursor = '0';
  do {
    const [next, page] = await redis.scan(cursor, 'MATCH', `${keys.base}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of page) found.add(key);
  } while (cursor !== '0');
  const dump: QueueDump = {};
  for (const key of [...found].sort()) {
    const [type, value, ttl] = await Promise.all([redis.type(key), redis.dumpBuffer(key), redis.pttl(key)]);
    dump[key] = { type, value: value ? value.toString('base64') : '', expires: ttl >= 0 };
  }
  return dump;
}

/** `emq doctor <queue> --json` without --repair, checking that it wrote nothing to the queue's keys. */
export async function checkOnly(
  redis: Redis,
  prefix: string,
  queue: string,
  ...flags: string[]
): Promise<DoctorRun> {
  const keys = queueKeys(queue, prefix);
  const before = await dumpQueue(redis, keys);
  const run = await doctor(prefix, queue, ...flags);
  expect(await dumpQueue(redis, keys)).toEqual(before);
  return run;
}
