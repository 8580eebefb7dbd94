import { checkDataFormat } from '../queue/data-format';
import type { ScriptContext } from '../scripts';
import type { LaneLevel } from '../scripts/repair-lane-index';
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
import { resolveDoctorOptions, type DoctorOptions } from './options';
import { checkRows } from './row-checks';

export type { DoctorOptions } from './options';

export interface QueueDiagnosis {
  readonly queue: string;
  /** False when the queue was left alone as a whole (see `unchecked`): nothing was read or written. */
  readonly checked: boolean;
  readonly findings: DoctorFinding[];
  /** What was looked at: members of the sets, rows, (lane, level) pending sets and lanes. */
  readonly scanned: { readonly members: number; readonly rows: number; readonly laneSets: number };
  /** Checks of this queue that could not be made, and why. */
  readonly unchecked: Unchecked[];
}

/**
 * Checks one queue's stored state against the invariants (docs/cli.md, "emq doctor"), and with
 * `repair` mends what it finds. Safe beside running workers: every check is a script that judges
 * its batch at one instant, and every repair re-checks its condition in the same call.
 *
 * In order (the order matters to repairs):
 * 1. the members of active, schedule, dead and the plain pending set;
 * 2. a SCAN pass for the lanes' pending sets (and lane settings), each set's members checked as
 *    it is found: misplaced jobs are moved home here, before any row is judged;
 * 3. a second SCAN pass for the rows, so that a row outside its own sets is an orphan only once
 *    every pending set has been looked at (a job is never put in pending a second time);
 * 4. lease deadlines, the lane indexes and lists, and the lane counts last (recounted from jobs
 *    that stay).
 * The SCAN passes run on the server that holds the queue (on a cluster, its slot's master) and
 * each walks that server's whole keyspace, a thousand slots a call.
 * @throws DataFormatError when the queue is written in a format this code does not know: nothing is read or written.
 */
export async function diagnoseQueue(
  ctx: ScriptContext,
  options: DoctorOptions = {},
): Promise<QueueDiagnosis> {
  const { mode, idsShown, leaseGraceMs, batch } = resolveDoctorOptions(options);
  await checkDataFormat(ctx);
  const log = new FindingLog(ctx.keys.queue, idsShown, mode === 'repair');
  const unchecked: Unchecked[] = [];
  const sightings = new LaneSightings();
  const misplacedIn: LaneLevel[] = [];
  let members = 0;
  for (const set of STATE_MEMBER_SETS) {
    const seen = await checkMembers(ctx, set, mode, log, batch);
    members += seen.members;
    if (seen.heldMisplaced && set.state === 'pending') misplacedIn.push({ lane: set.lane, level: set.level });
  }

  // Pending sets are 'pending:<level>:<lane>', lane settings 'lane:<lane>': no row ('job:...') matches.
  for await (const page of scanQueueKeys(ctx.redis, ctx.keys, '[pl]*')) {
    for (const key of page) {
      const what = classifyKey(ctx.keys, key);
      if (what.kind === 'lane-pending') {
        sightings.pendingSet(what.lane, what.level);
        sightings.lane(what.lane);
        const set = { state: 'pending', lane: what.lane, level: what.level } as const;
        const seen = await checkMembers(ctx, set, mode, log, batch);
        members += seen.members;
        if (seen.heldMisplaced) misplacedIn.push({ lane: what.lane, level: what.level });
      } else if (what.kind === 'lane-settings') {
        sightings.lane(what.lane);
      }
    }
  }
  const rows = await checkRows(ctx, mode, log, batch, misplacedIn);

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
    checked: true,
    findings: log.findings(),
    scanned: { members, rows, laneSets: sightings.pendingSets.length },
    unchecked,
  };
}
