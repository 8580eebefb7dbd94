import type { ScriptContext } from './context';
import { runScript } from './run-script';

/** When a queue next has work for a reaper, read at one instant on the server's clock. */
export interface QueueDeadlines {
  /** The server's clock at the read (ms since epoch). */
  readonly serverNow: number;
  /** The earliest lease deadline in active; null when nothing is active. */
  readonly leaseDeadline: number | null;
  /** The earliest run-at in schedule; null when nothing is scheduled. */
  readonly nextRunAt: number | null;
  /** Whether the queue has schedules (their sweep runs at every look). */
  readonly hasSchedules: boolean;
  /** The queue's recorded data format, as stored; null when none is recorded. */
  readonly format: string | null;
}

/**
 * One read-only script call: the heads of active and schedule, whether schedules exist, and the
 * recorded data format (so the reaper's format check costs no command of its own).
 */
export async function readDeadlines(ctx: ScriptContext): Promise<QueueDeadlines> {
  const { keys } = ctx;
  const keyList = [keys.active, keys.schedule, keys.schedulers, keys.format];
  const reply = (await runScript(ctx, 'emqDeadlines', keyList, [])) as [
    number,
    number,
    number,
    number,
    string,
  ];
  const [serverNow, lease, runAt, schedules] = reply.slice(0, 4).map(Number);
  const format = String(reply[4]);
  return {
    serverNow,
    leaseDeadline: lease < 0 ? null : lease,
    nextRunAt: runAt < 0 ? null : runAt,
    hasSchedules: schedules === 1,
    format: format === '' ? null : format,
  };
}
