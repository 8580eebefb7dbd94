/**
 * The job-control transitions in the reference model, written from the scripts' headers
 * (scripts/lua/{promote-job,update-job,retry-all,drain,clean,obliterate}.lua.ts):
 * - promote job: one scheduled job into its lane's pending now;
 * - update: a job that is not active gets new data, run-at, lane or level, moving between its
 *   sets and lanes as the flow helpers do (drained from the old place, offered at the new);
 * - retry all: dead -> pending oldest first, a fresh budget (attempts keeps counting);
 * - drain, clean, obliterate: rows deleted with their idempotency keys. Their walks visit the
 *   lanes' sets in an order the model does not follow, so these predict what a call (or a loop
 *   of chunks) removes in all, and the commands compare the ids as sets.
 */
import { idTime } from './ids';
import { byId, exactScore, hasRow, type Model, type ModelJob } from './reference';

const NOW: ModelJob['score'] = { kind: 'exact', value: 0 };

export type PromoteOutcome = 'ok' | 'notScheduled' | 'notFound';

/** promote job: schedule -> pending now, whatever its run-at. */
export function promoteJob(m: Model, id: string): PromoteOutcome {
  const job = m.jobs.get(id);
  if (!job || !hasRow(job)) return 'notFound';
  if (job.place !== 'schedule') return 'notScheduled';
  job.score = NOW;
  job.due = false;
  m.intoPending(job);
  m.bump('promoted');
  m.emit('promoted', [id]);
  return 'ok';
}

/** What an update call sends (as the script takes it: absent = keep). */
export interface ModelUpdate {
  readonly data?: string;
  readonly runAtMs?: number;
  readonly delayMs?: number;
  readonly lane?: string;
  readonly level?: number;
}

export type UpdateRefusal = 'notFound' | 'active' | 'finished' | 'deadRunAt' | 'occurrenceRunAt';
export type UpdateState = 'pending' | 'schedule' | 'dead';

export type UpdatePlan =
  | { readonly ok: false; readonly refusal: UpdateRefusal }
  | {
      readonly ok: true;
      readonly from: UpdateState;
      readonly target: UpdateState;
      readonly changed: string[];
    };

/**
 * What an update does, in the script's order of checks. `serverNow` is the last check's server
 * time: a run-at is chosen far from it, a delay of 0 is now (not ahead: pending).
 */
export function planUpdate(m: Model, id: string, u: ModelUpdate, serverNow: number): UpdatePlan {
  const job = m.jobs.get(id);
  if (!job || !hasRow(job)) return { ok: false, refusal: 'notFound' };
  if (job.place === 'active') return { ok: false, refusal: 'active' };
  if (job.place === 'completed') return { ok: false, refusal: 'finished' };
  const from = job.place as UpdateState;
  const timed = u.runAtMs !== undefined || u.delayMs !== undefined;
  if (timed && from === 'dead') return { ok: false, refusal: 'deadRunAt' };
  if (timed && job.scheduleKey !== null) return { ok: false, refusal: 'occurrenceRunAt' };
  const changed: string[] = [];
  let target = from;
  if (timed) {
    const ahead = u.runAtMs !== undefined ? u.runAtMs > serverNow : u.delayMs! > 0;
    target = ahead ? 'schedule' : 'pending';
    changed.push('runAt');
  }
  if (u.data !== undefined) changed.push('data');
  if (u.lane !== undefined && u.lane !== job.lane) changed.push('lane');
  if (u.level !== undefined && u.level !== job.level) changed.push('priority');
  return { ok: true, from, target, changed };
}

/**
 * Applies a planned update. `runAt`: the job's new score when it goes into (or stays in)
 * schedule by a run-at or delay (the command reads a delayed one back from Redis).
 */
export function applyUpdate(
  m: Model,
  job: ModelJob,
  u: ModelUpdate,
  plan: Extract<UpdatePlan, { ok: true }>,
  runAt: number | null,
): void {
  const { from, target } = plan;
  const timed = u.runAtMs !== undefined || u.delayMs !== undefined;
  const toLane = u.lane ?? job.lane;
  const toLevel = u.level ?? job.level;
  const moved = toLane !== job.lane || toLevel !== job.level;
  if (u.data !== undefined) job.data = u.data;
  if (from === 'pending' && (target !== 'pending' || moved)) {
    // Out of the old pending set first: its lane leaves ready / held there once it has no work.
    job.place = 'gone';
    m.flow.drained(job.lane, job.level);
  }
  job.lane = toLane;
  job.level = toLevel;
  if (target === 'pending' && (from !== 'pending' || moved)) {
    job.score = NOW;
    job.due = false;
    m.intoPending(job);
  } else if (target === 'schedule' && timed) {
    if (runAt === null) throw new Error('model: an update into schedule needs its run-at');
    job.place = 'schedule';
    job.score = { kind: 'exact', value: runAt };
    job.due = false;
  }
  m.bump('updated');
  m.emit('updated', [job.id], { state: target, fields: plan.changed.join(',') });
}

/** retry all, one chunk: up to `limit` dead jobs, oldest first, back to pending with a fresh budget. */
export function retryAll(m: Model, limit: number): { count: number; more: boolean } {
  const jobs = m.inPlace('dead').slice(0, limit);
  for (const job of jobs) job.base = job.attempts;
  m.pendByRow(jobs);
  m.bump('retried', jobs.length);
  m.emit(
    'retried',
    jobs.map((job) => job.id),
  );
  return { count: jobs.length, more: m.inPlace('dead').length > 0 };
}

/** Pending jobs leave with their rows; each (lane, level) they left is drained. */
function dropPending(m: Model, jobs: readonly ModelJob[]): void {
  const sets = new Map(jobs.map((job) => [`${job.level}:${job.lane}`, job]));
  for (const job of jobs) m.dropRow(job);
  for (const job of sets.values()) m.flow.drained(job.lane, job.level);
}

/** drain, to the end of its walk: every pending job (and scheduled one unless kept) goes. Returns their ids. */
export function drainAll(m: Model, keepScheduled: boolean): string[] {
  const pending = m.inPlace('pending');
  const scheduled = keepScheduled ? [] : m.inPlace('schedule');
  dropPending(m, pending);
  for (const job of scheduled) m.dropRow(job);
  const ids = [...pending, ...scheduled].map((job) => job.id);
  m.bump('drained', ids.length);
  return ids;
}

/** Ids minted before this id time are old enough for a clean (./ids.ts ageAt). */
export function isOld(id: string, cutoff: number): boolean {
  return idTime(id) < cutoff;
}

/** clean of pending, to the end of its walk: every old enough pending job goes. Returns their ids. */
export function cleanPending(m: Model, cutoff: number): string[] {
  const old = m.inPlace('pending').filter((job) => isOld(job.id, cutoff));
  dropPending(m, old);
  m.bump('cleaned', old.length);
  return old.map((job) => job.id);
}

/** clean of dead, one chunk: the oldest `limit` dead jobs old enough, in id order. */
export function cleanDead(m: Model, cutoff: number, limit: number): string[] {
  const old = m
    .inPlace('dead')
    .filter((job) => isOld(job.id, cutoff))
    .slice(0, limit);
  for (const job of old) m.dropRow(job);
  m.bump('cleaned', old.length);
  return old.map((job) => job.id);
}

/** clean of schedule, one chunk: the candidates still scheduled and old enough, in candidate order. */
export function cleanScheduled(m: Model, cutoff: number, candidates: readonly string[]): string[] {
  const gone: string[] = [];
  for (const id of candidates) {
    const job = m.jobs.get(id);
    if (!job || job.place !== 'schedule' || !isOld(id, cutoff)) continue;
    m.dropRow(job);
    gone.push(id);
  }
  m.bump('cleaned', gone.length);
  return gone;
}

/** Active jobs in the order obliterate takes them: by lease deadline, then id. */
export function activeByDeadline(m: Model): ModelJob[] {
  return m.inPlace('active').sort((a, b) => exactScore(a) - exactScore(b) || byId(a, b));
}

/** Leases not yet expired: obliterate without force refuses while there are any. */
export function liveLeases(m: Model): number {
  return m.inPlace('active').filter((job) => !job.due).length;
}

/**
 * obliterate, every chunk to the last: each active job is announced on the cancels stream (by
 * lease deadline), every job in a set goes with its row, and the queue's own keys go (paused,
 * schedulers, flow keys, metrics, events). Retained completed rows, idempotency keys, reply
 * records, debounce and throttle keys and the lane-rate counts of lanes never configured keep
 * their own TTLs. Returns the ids removed; the events are the command's (the last call's).
 */
export function obliterateAll(m: Model): string[] {
  const ids: string[] = [];
  for (const job of activeByDeadline(m)) {
    m.cancels.push({ id: job.id, attempt: String(job.attempts) });
    m.endedBy.set(job.claimant!, 'obliterate');
    ids.push(job.id);
    m.dropRow(job);
  }
  for (const place of ['pending', 'schedule', 'dead'] as const) {
    for (const job of m.inPlace(place)) {
      ids.push(job.id);
      m.dropRow(job);
    }
  }
  m.schedules.definitions.clear();
  m.schedules.next.clear();
  m.paused = false;
  m.resetFlow();
  for (const name of Object.keys(m.metrics)) delete m.metrics[name];
  m.events.splice(0);
  return ids;
}
