import { RedisUnavailableError } from '../errors';

/**
 * How Redis Cluster turned a confirmation's small write away without running it:
 *
 * - MOVED: its slot is served by another master (the application's slot map was out of date:
 *   a failover or a migration moved it since);
 * - ASK: its slot is being migrated and its key has moved to the target already;
 * - TRYAGAIN, CLUSTERDOWN: its slot is between owners, or has no master while a replica is
 *   being promoted;
 * - UNMAPPED: the application's cluster client maps no master to its slot yet (nothing sent).
 */
export type RedirectKind = 'MOVED' | 'ASK' | 'TRYAGAIN' | 'CLUSTERDOWN' | 'UNMAPPED';

const REDIRECT = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN)\b/;

/**
 * A confirmation the cluster did not run where it was sent. Nothing was written there and no
 * WAIT count applies to it, so its caller asks again (a RedisUnavailableError: repeated, never
 * counted), by which time the application's slot map names the slot's master. Its message says
 * what the cluster answered: the master was reachable, it just does not serve the slot.
 */
export class ConfirmationRedirectedError extends RedisUnavailableError {
  constructor(
    readonly redirect: RedirectKind,
    /** The cluster's own reply, first line (e.g. `MOVED 1234 10.0.0.7:6379`). */
    readonly reply: string,
  ) {
    super(
      "the master of the confirmed key's slot",
      0,
      `The cluster did not run the confirmation where it was sent (${reply}): nothing was written ` +
        "there; it is asked again on the slot's master",
    );
  }

  /** Why no confirmation could be made, as an UnconfirmedWriteError words it. */
  get reason(): string {
    switch (this.redirect) {
      case 'ASK':
        return `its slot was still being migrated to another master (${this.reply})`;
      case 'MOVED':
        return `the cluster kept sending it to another master (${this.reply})`;
      case 'UNMAPPED':
        return 'the cluster client knew no master for its slot';
      default:
        return `its slot had no master that would serve it (${this.reply})`;
    }
  }
}

/** The reply `error` as a redirect, or undefined when it is something else. */
export function redirectOf(error: Error | null | undefined): ConfirmationRedirectedError | undefined {
  const kind = error ? REDIRECT.exec(error.message)?.[1] : undefined;
  if (!kind) return undefined;
  return new ConfirmationRedirectedError(kind as RedirectKind, error!.message.split('\n')[0].slice(0, 200));
}
