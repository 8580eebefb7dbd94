import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { SCRIPTS } from '@app/echomq/internal';

/** The claim script's calls during one run, every worker together. */
export interface ClaimCalls {
  /** Calls of the claim script. */
  readonly calls: number;
  /** Of those, the calls that claimed no job (the queue was out of rate room, or nothing was pending). */
  readonly empty: number;
  /** Jobs the calls claimed, summed (a check: each job of a clean drain is claimed once). */
  readonly claimed: number;
}

/**
 * ioredis runs a defined command as EVALSHA of the SHA1 of its Lua text, so this names the
 * claim script's calls among all the queue's scripts.
 */
const CLAIM_SHA = createHash('sha1').update(SCRIPTS.emqClaim.lua).digest('hex');

/** Large enough for every command of a rate-limited run (scripts' inner commands included). */
const MAX_ENTRIES = 2_000_000;

type SlowLogEntry = [id: number, at: number, micros: number, args: string[], ...rest: unknown[]];

/**
 * Counts claim calls on the server, from outside the workers: with its threshold at 0 µs,
 * Redis's slow log records every command, both top-level ones (a claim is one EVALSHA of the
 * claim script) and those a script runs. A claim that claimed jobs bumps the queue's
 * `claimed` counter once (HINCRBY <metrics> claimed n, as every transition bumps its own
 * counter), and no other script bumps it, so the calls that claimed nothing are the rest.
 * The slow log costs Redis about a microsecond per command; it is switched on only for the
 * runs that count, and its settings are put back afterwards.
 */
export class ClaimCallCounter {
  private constructor(
    private readonly admin: Redis,
    private readonly saved: readonly [name: string, value: string][],
  ) {}

  /** Switches the slow log to record everything. */
  static async install(admin: Redis): Promise<ClaimCallCounter> {
    const saved: [string, string][] = [];
    for (const name of ['slowlog-log-slower-than', 'slowlog-max-len']) {
      const [, value] = (await admin.config('GET', name)) as string[];
      saved.push([name, value]);
    }
    await admin.config('SET', 'slowlog-max-len', String(MAX_ENTRIES));
    await admin.config('SET', 'slowlog-log-slower-than', '0');
    return new ClaimCallCounter(admin, saved);
  }

  /** Forgets what was recorded so far: call right before the run that counts. */
  async reset(): Promise<void> {
    await this.admin.call('SLOWLOG', 'RESET');
  }

  /** The claim calls since the last reset. */
  async read(): Promise<ClaimCalls> {
    const entries = (await this.admin.call('SLOWLOG', 'GET', '-1')) as SlowLogEntry[];
    if (entries.length >= MAX_ENTRIES) {
      throw new Error(`the slow log filled up (${MAX_ENTRIES} entries): the claim calls cannot be counted`);
    }
    let calls = 0;
    let productive = 0;
    let claimed = 0;
    for (const [, , , args] of entries) {
      const command = args[0]?.toLowerCase();
      if (command === 'evalsha' && args[1] === CLAIM_SHA) calls += 1;
      else if (command === 'hincrby' && args[1]?.endsWith(':metrics') && args[2] === 'claimed') {
        productive += 1;
        claimed += Number(args[3]);
      }
    }
    return { calls, empty: calls - productive, claimed };
  }

  /** Puts the slow log's settings back and empties it. */
  async uninstall(): Promise<void> {
    for (const [name, value] of this.saved) await this.admin.config('SET', name, value);
    await this.reset();
  }
}
