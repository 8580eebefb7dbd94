/**
 * job.log(line): a running job appends a line to its row (gn, g:<n>), fenced like progress:
 * a stale claim is refused (StaleJobError, nothing written, no reply recorded), a line over
 * JOB_LOG_LINE_MAX_BYTES is refused before anything is sent, and only the newest
 * JOB_LOG_LINES_KEPT lines stay (a step now and then writes more than that).
 */
import {
  appendJobLog,
  InvalidArgumentError,
  JOB_LOG_LINE_MAX_BYTES,
  JOB_LOG_LINES_KEPT,
  StaleJobError,
} from '@app/echomq/internal';
import type { Model } from '../reference';
import { count, type System } from '../system';
import { type ClaimPick, lostTag, resolveClaim, showClaim, Step } from './step';

/** short: a line; edge: exactly the byte cap (in 2-byte characters); over: one byte more (refused). */
export type LogLine = 'short' | 'edge' | 'over';

function lineText(kind: LogLine, step: number, n: number): string {
  const head = `step ${step} line ${n}`;
  if (kind === 'short') return head;
  const pad = JOB_LOG_LINE_MAX_BYTES - head.length + (kind === 'over' ? 1 : 0);
  // 'é' is 2 bytes: an odd pad ends with one 'x'
  return `${head}${'é'.repeat(Math.floor(pad / 2))}${pad % 2 === 1 ? 'x' : ''}`;
}

export class JobLog extends Step {
  constructor(
    readonly pick: ClaimPick,
    readonly line: LogLine,
    /** Lines written by this step, one call each (past the cap now and then). */
    readonly lines: number,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.claims.length > 0;
  }
  toString(): string {
    return `job log ${JSON.stringify(this.pick)} ${this.lines} x ${this.line}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const ref = resolveClaim(m, this.pick);
    r.note(`   claim ${showClaim(m, ref, this.pick)}`);
    if (this.line === 'over') {
      const before = await r.snapshot(m);
      await r.rejects(
        m,
        appendJobLog(r.ctx, ref, lineText('over', m.steps, 0)),
        InvalidArgumentError,
        'log line over the cap',
      );
      count('job log: a line over the cap refused');
      await r.expectUnchanged(m, before, 0, 'a refused log line');
      return;
    }
    if (!m.holds(ref)) {
      const before = await r.snapshot(m);
      const requestId = r.requestId('log');
      const outcome = await r.send(m, {
        kind: 'log',
        requestId,
        lost: this.lost,
        run: () => appendJobLog(r.ctx, ref, lineText(this.line, m.steps, 0), requestId),
      });
      const error = r.refused(m, outcome, StaleJobError, 'stale job log');
      r.eq(m, [error.id, error.attempt], [ref.id, ref.attempt], 'StaleJobError names the claim');
      count('job log: stale');
      // (the log script does not count stale calls, as progress does not)
      await r.expectUnchanged(m, before, 0, 'a stale job log');
      return;
    }
    const job = m.get(ref.id);
    for (let i = 0; i < this.lines; i++) {
      const text = lineText(this.line, m.steps, i);
      const requestId = r.requestId('log');
      const outcome = await r.send(m, {
        kind: 'log',
        requestId,
        lost: this.lost && i === 0,
        run: () => appendJobLog(r.ctx, ref, text, requestId),
      });
      job.logs.push(text);
      r.eq(m, r.value(m, outcome, 'job log'), job.logs.length, 'job log: the line number');
    }
    count(
      `job log: ${job.logs.length > JOB_LOG_LINES_KEPT ? 'past the cap' : job.attempts > 1 ? 'a later attempt' : 'written'}`,
    );
  }
}
