/**
 * Admin calls: retry (dead -> pending with a fresh budget) and remove (any state -> gone).
 * Both take a request id; a call that succeeded records its reply, a refused one records nothing.
 */
import { JobNotFoundError, JobStateError, removeJob, retryDead } from '@app/echomq/internal';
import type { Model } from '../reference';
import { count, type System } from '../system';
import { lostTag, type Pool, resolveId, Step } from './step';

export class Retry extends Step {
  constructor(
    readonly pool: Pool,
    readonly index: number,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return this.pool === 'dead' ? m.inPlace('dead').length > 0 : m.seqOf.size > 0;
  }
  toString(): string {
    return `retry ${this.pool}#${this.index}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const id = resolveId(m, this.pool, this.index);
    r.note(`   job ${m.label(id)} (${m.jobs.get(id)?.place ?? 'phantom'})`);
    const before = await r.snapshot(m);
    const requestId = r.requestId('retry');
    const outcome = await r.send(m, {
      kind: 'retry',
      requestId,
      lost: this.lost,
      run: () => retryDead(r.ctx, id, requestId),
    });
    const suspect = m.jobs.get(id)?.suspect === true;
    const predicted = m.retry(id);
    count(`retry: ${predicted}`);
    if (predicted === 'ok' && suspect) count('retry: a crash suspect stays one');
    if (predicted === 'ok') {
      r.value(m, outcome, 'retry');
      return;
    }
    r.refused(m, outcome, predicted === 'notDead' ? JobStateError : JobNotFoundError, 'retry');
    await r.expectUnchanged(m, before, 0, `a refused retry (${predicted})`);
  }
}

export class Remove extends Step {
  constructor(
    readonly pool: Pool,
    readonly index: number,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.seqOf.size > 0;
  }
  toString(): string {
    return `remove ${this.pool}#${this.index}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const id = resolveId(m, this.pool, this.index);
    r.note(`   job ${m.label(id)} (${m.jobs.get(id)?.place ?? 'phantom'})`);
    const before = await r.snapshot(m);
    const requestId = r.requestId('remove');
    const outcome = await r.send(m, {
      kind: 'remove',
      requestId,
      lost: this.lost,
      run: () => removeJob(r.ctx, id, requestId),
    });
    const predicted = m.remove(id);
    count(`remove: ${predicted}`);
    if (predicted === 'notFound') {
      r.refused(m, outcome, JobNotFoundError, 'remove');
      await r.expectUnchanged(m, before, 0, 'a remove of a job that does not exist');
      return;
    }
    r.eq(m, r.value(m, outcome, 'remove'), predicted, 'remove: the state the job was in');
  }
}
