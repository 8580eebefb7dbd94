import type { QueueService } from '@app/echomq';
import { readLedger } from './ledger';
import { recoveryByWorker } from './net-ledger-windows';

/** Pending jobs kept waiting while the probe runs, so any worker that claims finds work. */
const BACKLOG = 50;
const POLL_MS = 250;

/**
 * Whether every worker process completes a job again after the network is healed. Load alone
 * cannot tell: a worker whose wake wait sat on a dead socket (until its watchdog, the idle
 * wait plus a grace period) may find the others have drained the backlog by the time it
 * claims. So, until each worker has a completion since `since` or `deadlineMs` passes, this
 * keeps at least BACKLOG jobs pending, enqueued directly to Redis (not through the faults),
 * and reads the ledger. The probe's jobs are ordinary jobs: they run, complete and settle
 * like the producers' own, and are held to the same rerun rule.
 */
export async function offerWorkUntilEachCompletes(options: {
  readonly queues: QueueService;
  readonly queue: string;
  readonly ledgerDir: string;
  readonly pids: readonly number[];
  readonly since: number;
  readonly deadlineMs: number;
  readonly job: { readonly name: string; readonly data: Record<string, unknown> };
}): Promise<{ readonly recovery: Map<number, number | undefined>; readonly offered: number }> {
  const { queues, queue, pids, since, job } = options;
  let offered = 0;
  for (;;) {
    const recovery = recoveryByWorker(readLedger(options.ledgerDir), pids, since);
    const waiting = [...recovery.values()].some((ms) => ms === undefined);
    if (!waiting || Date.now() >= options.deadlineMs) return { recovery, offered };
    const { pending } = await queues.counts(queue);
    if (pending < BACKLOG) {
      const count = BACKLOG - pending;
      await queues.enqueueMany(
        queue,
        Array.from({ length: count }, () => ({ name: job.name, data: job.data })),
      );
      offered += count;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
