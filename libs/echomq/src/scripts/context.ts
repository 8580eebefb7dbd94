import { assertJobId, type QueueKeys } from '../keyspace';
import type { ScriptedClient } from './registry';

/** What every transition wrapper needs: a client with the scripts, one queue's keys, stream cap. */
export interface ScriptContext {
  readonly redis: ScriptedClient;
  readonly keys: QueueKeys;
  /** Approximate cap on the queue's event stream (XADD MAXLEN ~). */
  readonly eventsMaxLen: number;
  /** How long a write call's reply is kept for a repeat of it; DEFAULT_REPLAY_WINDOW_MS when absent. */
  readonly replayWindowMs?: number;
}

/** How long scripts remember a call's reply by default (module option replayWindowMs). */
export const DEFAULT_REPLAY_WINDOW_MS = 60_000;

export function replayWindow(ctx: ScriptContext): number {
  return ctx.replayWindowMs ?? DEFAULT_REPLAY_WINDOW_MS;
}

/** A claim as the worker holds it: the fencing token and the claimant presented on every call. */
export interface ClaimRef {
  readonly id: string;
  readonly attempt: number;
  readonly claimant: string;
}

/** Flattens claims into script arguments; a malformed id throws before anything is sent. */
export function claimArgs(claims: readonly ClaimRef[]): (string | number)[] {
  const args: (string | number)[] = [];
  for (const claim of claims) args.push(assertJobId(claim.id), claim.attempt, claim.claimant);
  return args;
}
