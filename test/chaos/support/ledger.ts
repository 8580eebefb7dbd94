import { closeSync, existsSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The battery's ledger: what happened, kept outside the Redis under test. Every worker and
 * producer process appends one line per fact to a file of its own, with a synchronous write
 * on an O_APPEND descriptor: once the call returns the line is the kernel's, so a SIGKILL of
 * the process right after cannot lose it. A line cut by a kill mid-write is skipped on reading.
 *
 *   run  <id> <attempt> <pid> <ms>   a handler started (the attempt is the fencing token)
 *   done <id> <attempt> <pid> <ms>   Redis accepted the completion (the worker's 'completed' event)
 *   stale <id> <attempt> <pid> <ms>  Redis refused a completion: the lease had been lost
 *   ack  <id> <seq> <pid> <ms>       enqueue returned the id to its producer (seq: the producer's order)
 *   fail <id> <code> <pid> <ms>      an enqueue failed with this error code (id '-': none minted)
 *
 * `<ms>` is the writing process's own clock (skewed in the clock scenario), for reports only.
 */
export type LedgerKind = 'run' | 'done' | 'stale' | 'ack' | 'fail';

export interface LedgerLine {
  readonly kind: LedgerKind;
  readonly id: string;
  /** The attempt for run/done/stale, the producer's sequence number for ack; NaN for fail. */
  readonly n: number;
  /** The error code of a fail line. */
  readonly code?: string;
  readonly pid: number;
  readonly at: number;
  /** The file the line came from (one per process incarnation). */
  readonly file: string;
}

const KINDS = new Set<LedgerKind>(['run', 'done', 'stale', 'ack', 'fail']);

/** Appends lines to one process's ledger file. */
export class LedgerWriter {
  private readonly fd: number;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'a');
  }

  write(kind: LedgerKind, id: string, n: number | string): void {
    writeSync(this.fd, `${kind} ${id} ${n} ${process.pid} ${Date.now()}\n`);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Every line of every ledger file in a folder (files named *.ledger), in file order. */
export function readLedger(dir: string): LedgerLine[] {
  if (!existsSync(dir)) return [];
  const lines: LedgerLine[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.ledger'))) {
    for (const text of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const line = parseLine(text, file);
      if (line) lines.push(line);
    }
  }
  return lines;
}

function parseLine(text: string, file: string): LedgerLine | undefined {
  const [kind, id, n, pid, at, ...rest] = text.split(' ');
  if (rest.length > 0 || at === undefined || !KINDS.has(kind as LedgerKind)) return undefined;
  const numbers = [Number(pid), Number(at)];
  if (numbers.some((value) => !Number.isFinite(value))) return undefined;
  const isFail = kind === 'fail';
  if (!isFail && !Number.isFinite(Number(n))) return undefined;
  return {
    kind: kind as LedgerKind,
    id,
    n: isFail ? Number.NaN : Number(n),
    ...(isFail ? { code: n } : {}),
    pid: numbers[0],
    at: numbers[1],
    file,
  };
}

/** The ledger folded by job: acks, runs and completions per id. */
export interface LedgerBook {
  /** Ids an enqueue returned, each with its producer's sequence number and pid. */
  readonly acked: Map<string, { seq: number; pid: number }>;
  /** Handler starts per id: [attempt, pid]. */
  readonly runs: Map<string, { attempt: number; pid: number }[]>;
  /** Accepted completions per id: the attempts (fencing tokens) that completed it. */
  readonly done: Map<string, number[]>;
  /** Refused (stale) completions. */
  readonly stale: number;
  /** Failed enqueues by error code. */
  readonly failures: Map<string, number>;
}

export function bookOf(lines: readonly LedgerLine[]): LedgerBook {
  const acked = new Map<string, { seq: number; pid: number }>();
  const runs = new Map<string, { attempt: number; pid: number }[]>();
  const done = new Map<string, number[]>();
  const failures = new Map<string, number>();
  let stale = 0;
  for (const line of lines) {
    switch (line.kind) {
      case 'ack':
        acked.set(line.id, { seq: line.n, pid: line.pid });
        break;
      case 'run':
        push(runs, line.id, { attempt: line.n, pid: line.pid });
        break;
      case 'done':
        push(done, line.id, line.n);
        break;
      case 'stale':
        stale += 1;
        break;
      case 'fail':
        failures.set(line.code ?? '?', (failures.get(line.code ?? '?') ?? 0) + 1);
        break;
    }
  }
  return { acked, runs, done, stale, failures };
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
