import type { ScriptName } from '@app/echomq/internal';
import type { FaultProxy } from '../../support/fault-proxy';
import { scriptOf } from './net-scripts';

/**
 * The network faults of the battery's scenario 4, injected through the loopback fault proxy
 * while workers and producers run, one after another with a recovery gap between them:
 *
 *   lost replies   one reply each to a claim, a completion, an enqueue and a heartbeat is
 *                  swallowed (the call ran); the connection goes deaf until the client's
 *                  deadline, or is closed right after (every other round swaps which)
 *   short silence  every connection stops forwarding, new ones too, for longer than the
 *                  command deadline and shorter than a lease: calls time out, leases hold
 *   reset          every connection is reset (ECONNRESET) at once
 *   refused        every connection is reset and new ones refused for a while (ECONNREFUSED,
 *                  or accepted and reset, every other round)
 *   long silence   as the short one, for longer than a lease: leases run out and are reaped
 */
export interface FaultPlanTimings {
  readonly rounds: number;
  /** Quiet time after each fault, so the next one hits a system that recovered. */
  readonly gapMs: number;
  readonly shortSilenceMs: number;
  readonly longSilenceMs: number;
  readonly refuseMs: number;
  /** How long the lost-reply rules wait for their kind of call to go by. */
  readonly lostWaitMs: number;
}

export type FaultKind =
  | 'lostReply'
  | 'lostReplyThenClose'
  | 'shortSilence'
  | 'longSilence'
  | 'reset'
  | 'refused'
  | 'refusedByReset';

export interface FaultRecord {
  /** Faults injected, by kind (a lost reply counts when its rule fired). */
  readonly injected: Readonly<Record<FaultKind, number>>;
  /** Replies lost by a rule, by the transition they answered. */
  readonly lostByScript: Readonly<Record<string, number>>;
  /** When the first fault began and the last one was healed (local clock, ms). */
  readonly firstAt: number;
  readonly lastHealAt: number;
}

/** The transitions one reply each of is lost per round. */
const LOST_REPLY_TARGETS: readonly ScriptName[] = ['emqClaim', 'emqComplete', 'emqEnqueue', 'emqExtend'];

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function runFaultPlan(
  proxy: FaultProxy,
  timings: FaultPlanTimings,
  log: (message: string) => void,
): Promise<FaultRecord> {
  const injected: Record<FaultKind, number> = {
    lostReply: 0,
    lostReplyThenClose: 0,
    shortSilence: 0,
    longSilence: 0,
    reset: 0,
    refused: 0,
    refusedByReset: 0,
  };
  const lostByScript: Record<string, number> = {};
  const firstAt = Date.now();

  // Wall-clock times, to line the faults up with the children's logs.
  const note = (what: string): void => log(`${what} at ${new Date().toISOString().slice(11, 23)}`);
  const silenceFor = async (kind: 'shortSilence' | 'longSilence', ms: number): Promise<void> => {
    note(`${kind} of ${ms} ms`);
    proxy.silence();
    injected[kind] += 1;
    await sleep(ms);
    await proxy.heal();
  };

  for (let round = 0; round < timings.rounds; round++) {
    note(`fault round ${round + 1} of ${timings.rounds}: lost replies`);
    const hits = LOST_REPLY_TARGETS.map((target, index) => {
      const thenClose = (round + index) % 2 === 1;
      return new Promise<void>((resolve) => {
        let fired = false;
        // The proxy asks a rule only about replies on a connection that is still open, and a
        // rule of count 1 that says yes fires exactly then: saying yes is the hit.
        proxy.loseRepliesWhile(
          (command) => {
            if (fired || scriptOf(command) !== target) return false;
            fired = true;
            injected[thenClose ? 'lostReplyThenClose' : 'lostReply'] += 1;
            lostByScript[target] = (lostByScript[target] ?? 0) + 1;
            resolve();
            return true;
          },
          { count: 1, thenClose },
        );
      });
    });
    await Promise.race([Promise.all(hits), sleep(timings.lostWaitMs)]);
    await proxy.heal(); // drops the rules whose call did not come by in time
    await sleep(timings.gapMs);

    await silenceFor('shortSilence', timings.shortSilenceMs);
    await sleep(timings.gapMs);

    note('reset');
    proxy.closeAll();
    injected.reset += 1;
    await sleep(timings.gapMs);

    const how = round % 2 === 0 ? 'unlisten' : 'reset';
    note(`refused (${how}) for ${timings.refuseMs} ms`);
    proxy.closeAll();
    await proxy.refuseNew(true, how);
    injected[how === 'unlisten' ? 'refused' : 'refusedByReset'] += 1;
    await sleep(timings.refuseMs);
    await proxy.heal();
    await sleep(timings.gapMs);

    await silenceFor('longSilence', timings.longSilenceMs);
    if (round + 1 < timings.rounds) await sleep(timings.gapMs);
  }
  return { injected, lostByScript, firstAt, lastHealAt: Date.now() };
}
