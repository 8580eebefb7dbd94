/**
 * A reply lost and the call repeated later (invariant 9): one of this run's write calls whose
 * reply record is still inside the replay window goes again, with the same request id and
 * arguments, as a resend after a reconnect or a caller's retry would. It must answer what the
 * first call answered (a claim: the jobs that claim still holds) and change nothing at all,
 * not even a counter or a TTL.
 */
import type { Model } from '../reference';
import { count, settle, type System } from '../system';
import { Step } from './step';

export class Repeat extends Step {
  constructor(
    /** Which of the calls with a live reply record (in call order). */
    readonly index: number,
    /** The latest such call rather than one by index. */
    readonly latest: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.replies.size > 0;
  }
  toString(): string {
    return `repeat ${this.latest ? 'the latest call' : `call #${this.index}`} (its reply was lost)`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const ids = m.replyIds();
    const requestId = this.latest ? ids[ids.length - 1] : ids[this.index % ids.length];
    const sent = r.sent.get(requestId);
    if (!sent) r.fail(m, `no call kept for reply record ${requestId}`);
    const record = m.replies.get(requestId)!;
    count(`repeat: ${sent.kind}${record.step === m.steps - 1 ? ' (the step before)' : ''}`);
    r.note(`   ${requestId} (${sent.kind}, step ${record.step})`);
    const before = await r.snapshot(m);
    const again = await settle(sent.run());
    sent.check(m, again);
    await r.expectUnchanged(m, before, 0, `a repeat of ${requestId}`);
  }
}
