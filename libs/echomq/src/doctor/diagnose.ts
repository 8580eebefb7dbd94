import { DataFormatError, describeValue, InvalidArgumentError } from '../errors';
import { checkDataFormat } from '../queue/data-format';
import type { ScriptContext } from '../scripts';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import { repairOrphans } from '../scripts/repair-orphans';
import type { RepairMode } from '../scripts/repair-mode';
import { FindingLog, type DoctorFinding, type Unchecked } from './findings';
import { classifyKey, scanQueueKeys } from './key-scan';
import {
  checkLaneActive,
  checkLaneIndex,
  checkLaneLists,
  gatherIndexedLanes,
  LaneSightings,
} from './lane-checks';
import { checkLeases } from './lease-checks';
import { checkMembers, STATE_MEMBER_SETS } from './member-checks';
import { NOT_CHECKABLE } from './unchecked';

export interface DoctorOptions {
  /** Mend what is found, each finding in the call that finds it. Default false: only look. */
  readonly repair?: boolean;
  /** Ids (or lanes) listed per finding: 1 to 1,000. Default 10. */
  readonly idsShown?: number;
  /**
   * How long past its deadline an active lease may be before it is reported (the wait for the
   * next reaper tick is normal): 0 to 3,600,000 ms. Default 5,000.
   */
  readonly leaseGraceMs?: number;
  /** Jobs (or lanes) per script call: 1 to 500 (SCRIPT_BATCH_MAX). Default 200. */
  readonly batch?: number;
}

export interface QueueDiagnosis {
  readonly queue: string;
  readonly findings: DoctorFinding[];
  /** What was looked at: members of the sets, rows, (lane, level) pending sets and lanes. */
  readonly scanned: { readonly members: number; readonly rows: number; readonly laneSets: number };
  /** Checks of this queue that could not be made, and why. */
  readonly unchecked: Unchecked[];
}

export interface DoctorReport {
  readonly repair: boolean;
  readonly queues: QueueDiagnosis[];
  /** What no look at stored state can check (see NOT_CHECKABLE). */
  readonly unchecked: readonly Unchecked[];
  /** True when nothing was found, or everything found was repaired. */
  readonly healthy: boolean;
}

interface Resolved {
  readonly mode: RepairMode;
  readonly idsShown: number;
  readonly leaseGraceMs: number;
  readonly batch: number;
}

function integerIn(value: unknown, what: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(
      `${what} must be an integer from ${min} to ${max}, got ${describeValue(value)}`,
    );
  }
  return value;
}

function resolve(options: DoctorOptions): Resolved {
  if (options.repair !== undefined && typeof options.repair !== 'boolean') {
    throw new InvalidArgumentError(`repair must be true or false, got ${describeValue(options.repair)}`);
  }
  return {
    mode: options.repair ? 'repair' : 'check',
    idsShown: integerIn(options.idsShown, 'idsShown', 1, 1_000, 10),
    leaseGraceMs: integerIn(options.leaseGraceMs, 'leaseGraceMs', 0, 3_600_000, 5_000),
    batch: integerIn(options.batch, 'batch', 1, SCRIPT_BATCH_MAX, 200),
  };
}

/**
 * Checks one queue's stored state against the invariants (docs/cli.md, "emq doctor"), and with
 * `repair` mends what it finds. Safe beside running workers: every check is a script that judges
 * its batch at one instant, and every repair re-checks its condition in the same call. The order
 * matters only to repairs: members of the sets first (so that the rows left outside every set
 * are real orphans, and the lane counts recounted after are of jobs that stay), then rows,
 * expired leases, the lane indexes and lists, and the lane counts last.
 * @throws DataFormatError when the queue is written in a format this code does not know: nothing is read or written.
 */
export async function diagnoseQueue(
  ctx: ScriptContext,
  options: DoctorOptions = {},
): Promise<QueueDiagnosis> {
  const { mode, idsShown, leaseGraceMs, batch } = resolve(options);
  await checkDataFormat(ctx);
  const log = new FindingLog(ctx.keys.queue, idsShown, mode === 'repair');
  const unchecked: Unchecked[] = [];
  const sightings = new LaneSightings();
  let members = 0;
  let rows = 0;
  for (const set of STATE_MEMBER_SETS) members += await checkMembers(ctx, set, mode, log, batch);

  let found: string[] = [];
  const flushRows = async (): Promise<void> => {
    if (found.length === 0) return;
    for (const orphan of await repairOrphans(ctx, mode, found)) {
      log.add('orphan-row', orphan.id, `${mode === 'repair' ? 'went' : 'goes'} to ${orphan.to}`);
    }
    found = [];
  };
  for await (const page of scanQueueKeys(ctx.redis, ctx.keys)) {
    for (const key of page) {
      const what = classifyKey(ctx.keys, key);
      if (what.kind === 'row') {
        rows++;
        found.push(what.id);
        if (found.length === batch) await flushRows();
      } else if (what.kind === 'lane-pending') {
        sightings.pendingSet(what.lane, what.level);
        sightings.lane(what.lane);
        members += await checkMembers(
          ctx,
          { state: 'pending', lane: what.lane, level: what.level },
          mode,
          log,
          batch,
        );
      } else if (what.kind === 'lane-settings') {
        sightings.lane(what.lane);
      }
    }
  }
  await flushRows();

  await checkLeases(ctx, mode, log, leaseGraceMs, idsShown);
  await gatherIndexedLanes(ctx, sightings, batch);
  if (sightings.strange > 0) {
    unchecked.push({
      check: 'lane indexes and lists',
      reason: `${sightings.strange} entries of ready, held, lanes-configured or lanes-paused name no lane (or no level): left alone`,
    });
  }
  await checkLaneIndex(ctx, mode, log, sightings, batch);
  await checkLaneLists(ctx, mode, log, sightings, batch);
  await checkLaneActive(ctx, mode, log, unchecked);
  return {
    queue: ctx.keys.queue,
    findings: log.findings(),
    scanned: { members, rows, laneSets: sightings.pendingSets.length },
    unchecked,
  };
}

/**
 * Diagnoses each queue in turn (see diagnoseQueue) and says whether all of them are healthy. A
 * queue written in a data format this code does not know is left alone (nothing read or written)
 * and listed as unchecked, so one newer queue does not stop the look at the others.
 */
export async function runDoctor(
  contexts: readonly ScriptContext[],
  options: DoctorOptions = {},
): Promise<DoctorReport> {
  resolve(options);
  const queues: QueueDiagnosis[] = [];
  for (const ctx of contexts) {
    try {
      queues.push(await diagnoseQueue(ctx, options));
    } catch (error) {
      if (!(error instanceof DataFormatError)) throw error;
      queues.push({
        queue: ctx.keys.queue,
        findings: [],
        scanned: { members: 0, rows: 0, laneSets: 0 },
        unchecked: [{ check: 'every check', reason: error.message }],
      });
    }
  }
  const healthy = queues.every((queue) =>
    queue.findings.every((finding) => finding.repaired >= finding.count),
  );
  return { repair: options.repair === true, queues, unchecked: NOT_CHECKABLE, healthy };
}
