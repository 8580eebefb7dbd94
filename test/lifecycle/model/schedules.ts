/**
 * The reference model of schedules (upsert-schedule, advance-schedule, remove-schedule): the
 * `schedulers` hash (key -> definition text), the `scheduler-next` hash (key -> id of its next
 * occurrence), and the occurrences, which are ordinary jobs of the Model with their schedule key
 * (row 'sk') and planned run-at (row 'sa'), written from the definition's template.
 *
 * Each transition returns what the script answers. The scripts tell an occurrence's place apart
 * as occurrence_at (schedule-occurrence.lua.ts) does: waiting (in schedule, never claimed),
 * pending, ran (claimed at least once, still a row), gone.
 */
import { parseDefinition, type StoredTemplate } from '@app/echomq/internal';
import { createHash } from 'node:crypto';
import { DEFAULT_LANE } from './flow';
import { hasRow, type Model, type ModelJob } from './reference';

export class Schedules {
  /** schedulers: key -> definition text. */
  readonly definitions = new Map<string, string>();
  /** scheduler-next: key -> id of the next occurrence. */
  readonly next = new Map<string, string>();
}

export type UpsertAnswer = { outcome: 'created' | 'updated' | 'unchanged'; id: string; runAtMs: number };

export type OccurrencePlace = 'waiting' | 'pending' | 'ran' | 'gone';

export function occurrencePlace(m: Model, id: string | null | undefined): OccurrencePlace {
  const job = id === undefined || id === null ? undefined : m.jobs.get(id);
  if (job === undefined || !hasRow(job)) return 'gone';
  if (job.place === 'schedule' && job.attempts === 0) return 'waiting';
  return job.place === 'pending' ? 'pending' : 'ran';
}

function sameSpec(a: string, b: string): boolean {
  return JSON.stringify(parseDefinition(a).spec) === JSON.stringify(parseDefinition(b).spec);
}

/** An occurrence waiting in schedule leaves with its row (ZREM + DEL): 'removed' from schedule. */
function dropWaiting(m: Model, job: ModelJob): void {
  m.dropRow(job);
  m.bump('removed');
  m.emit('removed', [job.id], { from: 'schedule' });
}

/**
 * write_occurrence: the template's fields, sk and sa (planned: run-at unless given), and the
 * trace context given (tc), in schedule at run-at.
 */
function writeOccurrence(
  m: Model,
  id: string,
  text: string,
  key: string,
  runAt: number,
  now: number,
  planned: number,
  traceContext: string | null,
): void {
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
    traceContext,
    workerMax: null,
    place: 'schedule',
    attempts: 0,
    base: 0,
    claimant: null,
    score: { kind: 'exact', value: runAt },
    due: runAt <= now,
    error: null,
    stack: null,
    result: null,
    progress: null,
    finishedNotBefore: 0,
    keepMs: 0,
    logs: [],
    scheduleKey: key,
    plannedAt: planned,
    debounceKey: null,
    debounced: false,
    suspect: false,
  });
  m.schedules.next.set(key, id);
  m.bump('enqueued');
  m.emit('enqueued', [id]);
}

/**
 * `now`: the server time of the last check (run-ats are chosen well clear of it). Every answer
 * is recorded ('unchanged' too), so `recorded` is always true.
 */
export function upsertSchedule(
  m: Model,
  key: string,
  text: string,
  id: string,
  runAt: number,
  now: number,
  traceContext: string | null = null,
): { answer: UpsertAnswer; recorded: boolean } {
  const s = m.schedules;
  const stored = s.definitions.get(key);
  const oldId = s.next.get(key);
  const where = occurrencePlace(m, oldId);
  const old = where === 'gone' ? null : m.jobs.get(oldId!)!;
  const running = where === 'pending' || where === 'ran';
  const oldAt = old === null ? 0 : running ? old.plannedAt! : exact(old);
  if (stored === text && old !== null) {
    return { answer: { outcome: 'unchanged', id: old.id, runAtMs: oldAt }, recorded: true };
  }
  const outcome = stored === undefined ? 'created' : 'updated';
  s.definitions.set(key, text);
  if (running) {
    // A run in progress: only the definition changes; that run's advance uses it.
    m.emit('schedule-upserted', [old!.id], { key, outcome });
    return { answer: { outcome, id: old!.id, runAtMs: oldAt }, recorded: true };
  }
  // The same timing keeps the waiting run's run-at and planned run-at.
  const keep = old !== null && stored !== undefined && sameSpec(stored, text);
  const at = keep ? oldAt : runAt;
  if (old) dropWaiting(m, old);
  // (the new occurrence carries this upsert's context, even when it keeps the old one's run-at)
  writeOccurrence(m, id, text, key, at, now, keep ? old.plannedAt! : at, traceContext);
  m.emit('schedule-upserted', [id], { key, outcome });
  return { answer: { outcome, id, runAtMs: at }, recorded: true };
}

export function definitionSha1(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex');
}

export function advanceSchedule(
  m: Model,
  call: {
    key: string;
    expected: string | null;
    digest: string;
    id: string;
    runAt: number;
    replace: boolean;
    /** The trace context the caller passed (ARGV[10]; a worker's claim read it), or null. */
    traceContext?: string | null;
  },
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
  const where = occurrencePlace(m, call.expected);
  // Never from a pending occurrence: its claim advances it.
  if (where === 'pending' || call.replace !== (where === 'waiting')) return 'STALE';
  // The next occurrence carries the expected one's trace context (its upsert's): its row's 'tc',
  // else (a row without one, or gone: a completion not retained beat the advance) the one the
  // caller passed, as advance-schedule.lua.ts reads them.
  const expected = call.expected === null ? undefined : m.jobs.get(call.expected);
  const fromRow = expected !== undefined && hasRow(expected) ? expected.traceContext : null;
  const traceContext = fromRow ?? call.traceContext ?? null;
  if (where === 'waiting') dropWaiting(m, m.jobs.get(call.expected!)!);
  writeOccurrence(m, call.id, stored, call.key, call.runAt, now, call.runAt, traceContext);
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
