/**
 * The reference model of schedules (upsert-schedule, advance-schedule, remove-schedule): the
 * `schedulers` hash (key -> definition text), the `scheduler-next` hash (key -> id of its next
 * occurrence), and the occurrences, which are ordinary jobs of the Model with their schedule key
 * (row 'sk') and planned run-at (row 'sa'), written from the definition's template.
 *
 * Each transition returns what the script answers, or null when it returns before recording a
 * reply ('unchanged', 'STALE', removing a schedule that does not exist: nothing written).
 */
import { parseDefinition, type StoredTemplate } from '@app/echomq/internal';
import { createHash } from 'node:crypto';
import { DEFAULT_LANE } from './flow';
import type { Model, ModelJob } from './reference';

export class Schedules {
  /** schedulers: key -> definition text. */
  readonly definitions = new Map<string, string>();
  /** scheduler-next: key -> id of the next occurrence. */
  readonly next = new Map<string, string>();
}

export type UpsertAnswer = { outcome: 'created' | 'updated' | 'unchanged'; id: string; runAtMs: number };

function waits(m: Model, id: string | undefined): ModelJob | null {
  const job = id === undefined ? undefined : m.jobs.get(id);
  return job !== undefined && job.place === 'schedule' ? job : null;
}

/** An occurrence waiting in schedule leaves with its row (ZREM + DEL): 'removed' from schedule. */
function dropWaiting(m: Model, job: ModelJob): void {
  m.dropRow(job);
  m.bump('removed');
  m.emit('removed', [job.id], { from: 'schedule' });
}

/** write_occurrence: the template's fields, sk and sa, in schedule at run-at. */
function writeOccurrence(m: Model, id: string, text: string, key: string, runAt: number, now: number): void {
  const t: StoredTemplate = parseDefinition(text).template;
  m.jobs.set(id, {
    id,
    seq: m.seqOf.get(id)!,
    data: t.data,
    name: t.name ?? '',
    max: t.maxAttempts ?? null,
    backoff: t.backoff ?? null,
    idem: null,
    lane: t.lane ?? DEFAULT_LANE,
    level: t.priority ?? 0,
    timeoutMs: t.timeoutMs ?? null,
    workerMax: null,
    place: 'schedule',
    attempts: 0,
    base: 0,
    claimant: null,
    score: { kind: 'exact', value: runAt },
    due: runAt <= now,
    error: null,
    result: null,
    progress: null,
    finishedNotBefore: 0,
    keepMs: 0,
    logs: [],
    scheduleKey: key,
    plannedAt: runAt,
    debounceKey: null,
    debounced: false,
  });
  m.schedules.next.set(key, id);
  m.bump('enqueued');
  m.emit('enqueued', [id]);
}

/** `now`: the server time of the last check (run-ats are chosen well clear of it). */
export function upsertSchedule(
  m: Model,
  key: string,
  text: string,
  id: string,
  runAt: number,
  now: number,
): { answer: UpsertAnswer; recorded: boolean } {
  const s = m.schedules;
  const stored = s.definitions.get(key);
  const old = waits(m, s.next.get(key));
  if (stored === text && old) {
    return { answer: { outcome: 'unchanged', id: old.id, runAtMs: exact(old) }, recorded: false };
  }
  const outcome = stored === undefined ? 'created' : 'updated';
  s.definitions.set(key, text);
  if (old) dropWaiting(m, old);
  writeOccurrence(m, id, text, key, runAt, now);
  m.emit('schedule-upserted', [id], { key, outcome });
  return { answer: { outcome, id, runAtMs: runAt }, recorded: true };
}

export function definitionSha1(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex');
}

export function advanceSchedule(
  m: Model,
  call: { key: string; expected: string | null; digest: string; id: string; runAt: number; replace: boolean },
  now: number,
): 'OK' | 'STALE' {
  const s = m.schedules;
  const current = s.next.get(call.key);
  const stored = s.definitions.get(call.key);
  if (
    stored === undefined ||
    (current ?? '') !== (call.expected ?? '') ||
    definitionSha1(stored) !== call.digest
  ) {
    return 'STALE';
  }
  const waiting = call.expected === null ? null : waits(m, call.expected);
  if (call.replace !== (waiting !== null)) return 'STALE';
  if (waiting) dropWaiting(m, waiting);
  writeOccurrence(m, call.id, stored, call.key, call.runAt, now);
  return 'OK';
}

export function removeSchedule(m: Model, key: string): boolean {
  const s = m.schedules;
  const had = s.definitions.has(key);
  const nextId = s.next.get(key);
  if (!had && nextId === undefined) return false;
  s.definitions.delete(key);
  s.next.delete(key);
  let gone = '';
  const job = nextId === undefined ? undefined : m.jobs.get(nextId);
  if (job && (job.place === 'schedule' || job.place === 'pending')) {
    const from = job.place;
    m.dropRow(job);
    if (from === 'pending') m.flow.drained(job.lane, job.level);
    m.bump('removed');
    m.emit('removed', [job.id], { from });
    gone = job.id;
  }
  m.events.push({ type: 'schedule-removed', ids: gone, fields: { key } });
  return true;
}

function exact(job: ModelJob): number {
  if (job.score.kind !== 'exact') throw new Error(`model: occurrence ${job.id} has no exact run-at`);
  return job.score.value;
}
