import { InvalidArgumentError } from '../errors';
import type { ScriptContext } from './context';
import { LEASE_CEILING_MS, LEASE_SKEW_MS } from './lua/repair-leases.lua';
import { modeArg, type RepairMode } from './repair-mode';
import { runScript } from './run-script';

export { LEASE_CEILING_MS, LEASE_SKEW_MS };

/** An active job and its lease deadline (ms since epoch on the server clock; Infinity for +inf). */
export interface Lease {
  readonly id: string;
  readonly deadline: number;
}

export interface LeaseCheck {
  /** The server's clock when the script ran (ms since epoch). */
  readonly now: number;
  /** Leases past their deadline by more than the grace, and the first of them, soonest first. */
  readonly expired: number;
  readonly expiredShown: Lease[];
  /** Deadlines past now + LEASE_CEILING_MS + LEASE_SKEW_MS, and the first of them. */
  readonly farFuture: number;
  readonly farFutureShown: Lease[];
  /** How many far-future deadlines this call set to now (repair only; at most SCRIPT_BATCH_MAX). */
  readonly farFutureRepaired: number;
}

function leases(flat: readonly string[]): Lease[] {
  const out: Lease[] = [];
  for (let i = 0; i < flat.length; i += 2) {
    const score = flat[i + 1];
    out.push({ id: flat[i], deadline: /^\+?inf$/i.test(score) ? Infinity : Number(score) });
  }
  return out;
}

/**
 * The active set's deadlines against the server's clock, in one script (the clock read there):
 * leases expired more than `graceMs` ago, which only the reaper's transition returns (this
 * script only reports them), and deadlines further ahead than any lease, which 'repair' sets to
 * now so that the next reap returns the job (repair-leases.lua.ts).
 */
export async function repairLeases(
  ctx: ScriptContext,
  mode: RepairMode,
  graceMs: number,
  shown: number,
): Promise<LeaseCheck> {
  if (!Number.isInteger(graceMs) || graceMs < 0 || graceMs > 3_600_000) {
    throw new InvalidArgumentError(`graceMs must be an integer from 0 to 3600000, got ${graceMs}`);
  }
  if (!Number.isInteger(shown) || shown < 1 || shown > 1_000) {
    throw new InvalidArgumentError(`shown must be an integer from 1 to 1000, got ${shown}`);
  }
  const { keys } = ctx;
  const [now, expired, expiredShown, farFuture, farFutureShown, repaired] = (await runScript(
    ctx,
    'emqRepairLeases',
    [keys.fence, keys.active, keys.metrics, keys.events],
    [modeArg(mode), ctx.eventsMaxLen, graceMs, shown],
  )) as [number, number, string[], number, string[], number];
  return {
    now: Number(now),
    expired: Number(expired),
    expiredShown: leases(expiredShown),
    farFuture: Number(farFuture),
    farFutureShown: leases(farFutureShown),
    farFutureRepaired: Number(repaired),
  };
}
