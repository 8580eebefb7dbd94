import type { Logger } from '@nestjs/common';
import { monotonicMs } from '../monotonic';
import { ChangeSignal } from './change-signal';

/** One claim loop, as the gate of its process sees it. */
export interface IsolationMember {
  readonly queue: string;
  readonly logger: Logger;
  /** Attempts the loop holds unsettled: handlers running on them, and outcomes on their way to Redis. */
  readonly unsettled: number;
  /** How long the loop waits for the process to empty before it goes on anyway: its lease. */
  readonly waitMaxMs: number;
}

/** A claim loop's member: its queue, its lease as the bound of its waits, its slots' unsettled attempts. */
export function isolationMember(
  queue: string,
  logger: Logger,
  leaseMs: number,
  slots: { readonly unsettledCount: number },
): IsolationMember {
  return {
    queue,
    logger,
    waitMaxMs: leaseMs,
    get unsettled() {
      return slots.unsettledCount;
    },
  };
}

/**
 * What a loop may do now:
 * - wait (until the gate changes, or `recheckMs`);
 * - claim, handing out crash suspects as `suspects` says (see SuspectRule): 'alone' only
 *   while the process holds nothing else, and then `exclusive` (no other claim of the process
 *   runs beside it, so nothing can join a suspect it gets).
 */
export type ClaimTurn =
  | { readonly claim: false; readonly recheckMs?: number }
  | { readonly claim: true; readonly suspects: 'alone' | 'none'; readonly exclusive: boolean };

/**
 * What a claim brought: whether it skipped a suspect, whether it got fewer jobs than it asked
 * for, and the settlement of the suspect it took alone.
 */
export interface ClaimedOutcome {
  readonly suspectAhead: boolean;
  readonly short: boolean;
  readonly suspect?: Promise<void>;
}

const WAIT: ClaimTurn = { claim: false };

/**
 * Crash isolation for one process (one per application, shared by its claim loops). A job
 * whose last lease ran out is a crash suspect: its worker may have died of it, and had it run
 * beside other jobs, they would have lost their attempts with it, again at every claim that
 * took them together. So a suspect runs with nothing else in flight in its process:
 *
 * - a claim made while the process holds nothing asks for 'alone': a suspect met first is the
 *   call's one job. It is then the only job of the process: no loop claims until it settles.
 *   Then the process rests from suspects for as long as that one ran (its empty moments
 *   claim 'none'), unless no other work is left: at most half of a process's time goes to
 *   running suspects alone while there is other work, however many come back at once (after a
 *   stall of Redis longer than the leases, every job that was running does);
 * - any other claim asks for 'none': suspects are skipped (suspectAhead), the jobs behind them
 *   taken. A busy process so leaves a suspect to a process with nothing to do, or to its own
 *   next empty moment, and keeps serving the other jobs meanwhile. When the claim came back
 *   short (no other work) or suspects have been skipped for a lease, the loop queues in the
 *   gate's line: the process claims nothing more until every attempt it holds is settled,
 *   then the loop at the head of the line claims (alone). A claim that skips no suspect takes
 *   its loop out of the line.
 *
 * "Holds" counts running handlers, outcomes on their way to Redis and claims in flight: each
 * of them would be reaped, an attempt spent, if the process died. Handlers still running
 * after their attempt timed out (they ignored their abort) are not waited for: their attempts
 * are settled already.
 *
 * Liveness: every wait is bounded by one lease (the waiting loop's leaseMs). A handler of the
 * process may wait for a job only a claim can start (a follow-up in the same process), so
 * past that bound the gate lets claims go on: the head of the line claims 'alone' beside
 * whatever still runs, and beside a suspect that has run a lease the process claims again,
 * never a second suspect. Each such step is logged as a warning.
 */
export class IsolationGate {
  /** Told of every change that may let a waiting loop claim (loops forward theirs here). */
  readonly changes = new ChangeSignal();
  private readonly members = new Set<IsolationMember>();
  /** Loops waiting to claim a suspect they skipped, in order; the head claims once the process is empty. */
  private readonly line: IsolationMember[] = [];
  /** When the head of the line began waiting; a new object for each head, so a warning is said once per wait. */
  private head = { since: 0 };
  private claimsInFlight = 0;
  private exclusive = false;
  /** The suspect running alone: its loop, and when it started. */
  private alone?: { readonly member: IsolationMember; readonly since: number; readonly waitMaxMs: number };
  /** A valve already said, so it is warned about once per wait. */
  private warned?: object;
  /** Since when each loop's claims have skipped suspects (while they still got full batches). */
  private readonly skipping = new Map<IsolationMember, number>();
  /** Until when the process rests from suspects after running one alone (monotonic ms). */
  private restUntil = 0;

  join(member: IsolationMember): void {
    this.members.add(member);
  }

  /** A loop stopped claiming: it no longer counts, and its place in the line goes. */
  leave(member: IsolationMember): void {
    this.members.delete(member);
    this.skipping.delete(member);
    this.leaveLine(member);
    this.changes.notify();
  }

  /** Whether the process holds claiming for a suspect of this loop: waiting to empty, or running it alone. */
  isolating(member: IsolationMember): boolean {
    return this.alone?.member === member || this.line.includes(member);
  }

  turn(member: IsolationMember): ClaimTurn {
    if (this.exclusive) return WAIT;
    const now = monotonicMs();
    if (this.alone) {
      const until = this.alone.since + this.alone.waitMaxMs;
      if (now < until) return { claim: false, recheckMs: until - now };
      this.warnOnce(
        this.alone,
        member,
        `a job that may crash its worker has run alone for a lease (${this.alone.waitMaxMs} ms); ` +
          'claiming beside it',
      );
      return { claim: true, suspects: 'none', exclusive: false };
    }
    const head = this.line[0];
    if (this.quiet() && (head === undefined || head === member)) {
      if (head === undefined && now < this.restUntil)
        return { claim: true, suspects: 'none', exclusive: false };
      return { claim: true, suspects: 'alone', exclusive: true };
    }
    if (head === undefined) return { claim: true, suspects: 'none', exclusive: false };
    const until = this.head.since + head.waitMaxMs;
    if (now < until) return { claim: false, recheckMs: until - now };
    // Past the bound: the process did not empty within a lease (see the class comment).
    this.warnOnce(
      this.head,
      head,
      `jobs of this process still ran a lease (${head.waitMaxMs} ms) after a job that may crash its ` +
        'worker came next; claiming it beside them',
    );
    if (head === member) return { claim: true, suspects: 'alone', exclusive: true };
    return { claim: true, suspects: 'none', exclusive: false };
  }

  /** A claim of this turn is about to be sent. */
  claiming(turn: ClaimTurn): void {
    if (!turn.claim) return;
    this.claimsInFlight += 1;
    if (turn.exclusive) this.exclusive = true;
  }

  /**
   * The claim's jobs were launched (outcome), or the claim failed (no outcome). Called in the
   * same tick as the launches, so no loop sees the process empty in between.
   */
  claimed(member: IsolationMember, turn: ClaimTurn, outcome?: ClaimedOutcome): void {
    if (!turn.claim) return;
    this.claimsInFlight -= 1;
    if (turn.exclusive) this.exclusive = false;
    if (outcome?.suspect) {
      this.skipping.delete(member);
      this.leaveLine(member);
      const alone = { member, since: monotonicMs(), waitMaxMs: member.waitMaxMs };
      this.alone = alone;
      void outcome.suspect.finally(() => {
        const now = monotonicMs();
        this.restUntil = now + (now - alone.since);
        if (this.alone === alone) this.alone = undefined;
        this.changes.notify();
      });
    } else if (outcome?.suspectAhead) {
      const since = this.skipping.get(member) ?? monotonicMs();
      this.skipping.set(member, since);
      // Busy with other work: the suspect waits for an empty moment, at most a lease.
      if (!outcome.short && monotonicMs() - since < member.waitMaxMs) return this.changes.notify();
      if (!this.line.includes(member)) {
        if (this.line.length === 0) this.head = { since: monotonicMs() };
        this.line.push(member);
        member.logger.log(
          `Queue ${member.queue}: a job whose last lease ran out (it may have crashed its worker) is ` +
            'waiting; this process claims nothing more until its jobs are done, then runs it alone',
        );
      }
    } else if (outcome) {
      this.skipping.delete(member);
      this.leaveLine(member);
    }
    this.changes.notify();
  }

  /** Nothing in the process holds an unsettled attempt, and no claim is on its way. */
  private quiet(): boolean {
    if (this.claimsInFlight > 0) return false;
    for (const member of this.members) if (member.unsettled > 0) return false;
    return true;
  }

  private leaveLine(member: IsolationMember): void {
    const at = this.line.indexOf(member);
    if (at < 0) return;
    this.line.splice(at, 1);
    if (at === 0) this.head = { since: monotonicMs() };
  }

  private warnOnce(episode: object, member: IsolationMember, message: string): void {
    if (this.warned === episode) return;
    this.warned = episode;
    member.logger.warn(`Queue ${member.queue}: ${message}`);
  }
}
