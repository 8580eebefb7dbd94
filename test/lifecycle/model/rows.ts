/**
 * The per-job checks of a verification: a row's exact fields and TTL, and its score in the
 * set that holds it, against the model.
 */
import { JOB_LOG_LINES_KEPT } from '@app/echomq/internal';
import { DEFAULT_LANE } from './flow';
import { type Model, type ModelJob } from './reference';

/** How far a time a script returns or writes may be from the server time of the check. */
export const CLOCK_SLACK_MS = 60_000;

/** Row fields the scripts may write (DESIGN §1 / prelude). */
const ROW_FIELDS = new Set([
  ...['d', 'n', 'm', 'w', 'o', 'a', 'b', 'c', 'e', 'r', 'f', 'k', 'p', 'l', 'y', 't', 'x'],
  ...['sk', 'sa', 'dk', 'df', 'dm', 'gn', 'tc', 'es'],
]);
/** Log line n of a job ('g:<n>'). */
const LOG_LINE = /^g:[1-9][0-9]*$/;

/** Where checks report (the System of the run). */
export interface Reporter {
  /** Highest attempts seen per id: attempts never decreases (invariant 3). */
  readonly seenAttempts: Map<string, number>;
  fail(m: Model, message: string): never;
  eq(m: Model, actual: unknown, expected: unknown, what: string): void;
}

export function checkRow(
  r: Reporter,
  m: Model,
  job: ModelJob,
  raw: Record<string, Buffer>,
  pttl: number,
  now: number,
): void {
  const who = m.label(job.id);
  const { payload, fields } = splitPayload(r, m, who, raw);
  const attempts = Number(fields.a ?? '0');
  const seen = r.seenAttempts.get(job.id) ?? 0;
  if (attempts < seen) r.fail(m, `invariant 3: attempts of ${who} went down from ${seen} to ${attempts}`);
  r.seenAttempts.set(job.id, attempts);

  for (const field of Object.keys(fields)) {
    if (!ROW_FIELDS.has(field) && !LOG_LINE.test(field))
      r.fail(m, `row of ${who} has an unknown field ${field}`);
  }
  if (payload === null || !payload.equals(payloadBytes(job))) {
    r.fail(m, `payload of ${who} reads back as ${String(payload?.toString().slice(0, 80))}...`);
  }
  const expected: Record<string, string> = {
    a: String(job.attempts),
    b: String(job.base),
  };
  // Only a job's own budget and backoff are on its row; 'w' once a worker claimed it without one.
  if (job.max !== null) expected.m = String(job.max);
  if (job.workerMax !== null) expected.w = String(job.workerMax);
  if (job.backoff !== null) expected.o = job.backoff;
  if (job.name !== '') expected.n = job.name;
  if (job.idem !== null) expected.k = job.idem;
  if (job.claimant !== null) expected.c = job.claimant;
  if (job.error !== null) expected.e = job.error;
  if (job.stack !== null) expected.es = job.stack;
  if (job.place === 'completed') expected.r = job.result ?? '';
  if (job.progress !== null) expected.p = job.progress;
  // Its lane and level only when not the default lane / level 0; its own timeout when it has one.
  if (job.lane !== DEFAULT_LANE) expected.l = job.lane;
  if (job.level !== 0) expected.y = String(job.level);
  if (job.timeoutMs !== null) expected.t = String(job.timeoutMs);
  // The trace context its producer left, as given (and nothing for a job enqueued without one).
  if (job.traceContext !== null) expected.tc = job.traceContext;
  // A crash suspect (reaped; not settled by a handler since).
  if (job.suspect) expected.x = '1';
  // Its log: the count of lines written, and the newest JOB_LOG_LINES_KEPT of them.
  const lines = job.logs.length;
  if (lines > 0) expected.gn = String(lines);
  for (let n = Math.max(1, lines - JOB_LOG_LINES_KEPT + 1); n <= lines; n++)
    expected[`g:${n}`] = job.logs[n - 1];
  if (job.scheduleKey !== null) expected.sk = job.scheduleKey;
  if (job.plannedAt !== null) expected.sa = String(job.plannedAt);
  if (job.debounceKey !== null) expected.dk = job.debounceKey;
  const { f, df, dm, ...rest } = fields;
  // A debounce's max-wait deadline (first enqueue + maxWait, a server time): only on a debounced
  // job; its value is checked by the debounce command, which knows the maxWait it gave.
  if (dm !== undefined && job.debounceKey === null)
    r.fail(m, `${who}: has a debounce deadline dm but no debounce key`);
  if (dm !== undefined && !(Number(dm) >= now - 10 * CLOCK_SLACK_MS))
    r.fail(m, `${who}: debounce deadline dm ${dm} is not a server time`);
  // A debounced job's first enqueue is a server time: present exactly when it is debounced.
  if (job.debounced !== (df !== undefined)) r.fail(m, `${who}: first-enqueue field df is ${df ?? 'absent'}`);
  if (df !== undefined && !(Math.abs(Number(df) - now) <= 10 * CLOCK_SLACK_MS))
    r.fail(m, `${who}: df ${df} is not a server time near ${now}`);
  const actual: Record<string, string> = { ...rest, a: rest.a ?? '0', b: rest.b ?? '0' };
  if (!sameFields(actual, expected)) {
    const differ = [...new Set([...Object.keys(actual), ...Object.keys(expected)])]
      .filter((field) => actual[field] !== expected[field])
      .sort();
    const what = differ.includes('a')
      ? `invariant 3: attempts of ${who} is ${actual.a}, but it was claimed ${expected.a} times`
      : `row of ${who} differs in ${differ.join(', ')}`;
    r.eq(m, actual, expected, what);
  }

  if (job.place === 'completed') {
    // A finished row says so ('f'): the job view reads 'completed' only then.
    const finished = Number(f);
    if (!(finished >= job.finishedNotBefore - CLOCK_SLACK_MS && finished <= now + CLOCK_SLACK_MS)) {
      r.fail(m, `finished-at of ${who} is ${f}, expected about [${job.finishedNotBefore}, ${now}]`);
    }
    if (!(pttl > 0 && pttl <= job.keepMs)) {
      r.fail(m, `retained row of ${who} has PTTL ${pttl}, expected in (0, ${job.keepMs}]`);
    }
  } else {
    if (f !== undefined) r.fail(m, `${who} is ${job.place} but has a finished-at`);
    if (pttl !== -1) r.fail(m, `${who} is ${job.place} but its row expires (${pttl})`);
  }
}

/**
 * Takes the payload out of a row: 'd', then chunks 'd2' .. 'dN' (contiguous, joined as bytes),
 * and 'dn' = N when present. Returns the payload bytes and the other fields as text.
 */
function splitPayload(
  r: Reporter,
  m: Model,
  who: string,
  raw: Record<string, Buffer>,
): { payload: Buffer | null; fields: Record<string, string> } {
  const fields: Record<string, string> = {};
  const chunks = new Map<number, Buffer>();
  let count: string | undefined;
  for (const name in raw) {
    const value = raw[name];
    if (name === 'd') chunks.set(1, value);
    else if (name === 'dn') count = value.toString();
    else if (name.startsWith('d') && /^d[0-9]+$/.test(name)) chunks.set(Number(name.slice(1)), value);
    else fields[name] = value.toString();
  }
  if (!chunks.has(1)) return { payload: null, fields };
  if (chunks.size === 1 && count === undefined) return { payload: chunks.get(1)!, fields };
  const parts: Buffer[] = [];
  for (let i = 1; i <= chunks.size; i++) {
    const part = chunks.get(i);
    if (!part) r.fail(m, `payload chunks of ${who} are not contiguous: ${[...chunks.keys()].join(',')}`);
    parts.push(part);
  }
  if (count !== undefined && Number(count) !== chunks.size) {
    r.fail(m, `payload of ${who} has ${chunks.size} chunks, but dn says ${count}`);
  }
  return { payload: Buffer.concat(parts), fields };
}

export function checkScore(r: Reporter, m: Model, job: ModelJob, score: number, now: number): void {
  const who = `${m.label(job.id)} in ${job.place}`;
  if (job.score.kind === 'exact') {
    r.eq(m, score, job.score.value, `score of ${who}`);
  } else {
    const lo = job.score.notBefore + job.score.delay - CLOCK_SLACK_MS;
    const hi = now + job.score.delay + CLOCK_SLACK_MS;
    if (!(score >= lo && score <= hi)) r.fail(m, `run-at of ${who} is ${score}, expected in [${lo}, ${hi}]`);
  }
  if (job.place === 'active' || job.place === 'schedule') {
    if (job.due !== score <= now) {
      r.fail(m, `${who}: score ${score} vs server now ${now}, model says due=${job.due}`);
    }
  }
}

function sameFields(a: Record<string, string>, b: Record<string, string>): boolean {
  let n = 0;
  for (const key in a) {
    if (a[key] !== b[key]) return false;
    n += 1;
  }
  return n === Object.keys(b).length;
}

const payloads = new WeakMap<ModelJob, { data: string; bytes: Buffer }>();

/** A job's payload as bytes (made once per job and payload: a debounce replaces it). */
function payloadBytes(job: ModelJob): Buffer {
  let made = payloads.get(job);
  if (!made || made.data !== job.data) {
    made = { data: job.data, bytes: Buffer.from(job.data) };
    payloads.set(job, made);
  }
  return made.bytes;
}
