import type { Cluster, Redis } from 'ioredis';
import { CLAIM_LUA } from './lua/claim.lua';
import { COMPLETE_LUA } from './lua/complete.lua';
import { ENQUEUE_LUA } from './lua/enqueue.lua';
import { EXTEND_LUA } from './lua/extend.lua';
import { FAIL_LUA } from './lua/fail.lua';
import { JOB_VIEW_LUA } from './lua/job-view.lua';
import { READ_LANES_LUA } from './lua/lane-reads.lua';
import { BROWSE_PENDING_LUA, COUNT_PENDING_LUA } from './lua/pending-reads.lua';
import { PAUSE_LANE_LUA } from './lua/pause-lane.lua';
import { PROGRESS_LUA } from './lua/progress.lua';
import { RECORD_PARTITIONS_LUA } from './lua/record-partitions.lua';
import { PROMOTE_LUA } from './lua/promote.lua';
import { REAP_LUA } from './lua/reap.lua';
import { RELEASE_LUA } from './lua/release.lua';
import { REMOVE_LUA } from './lua/remove.lua';
import { RESUME_LANE_LUA } from './lua/resume-lane.lua';
import { RETRY_LUA } from './lua/retry.lua';
import { SET_LANE_LUA } from './lua/set-lane.lua';
import { SET_LIMITS_LUA } from './lua/set-limits.lua';
import { THROTTLE_LUA } from './lua/throttle.lua';
import { HOLD_QUEUE_LUA } from './lua/hold-queue.lua';
import { DEADLINES_LUA } from './lua/deadlines.lua';
import { CONTROL_SCRIPTS } from './control-scripts';
import { DEDUPE_SCRIPTS } from './dedupe-scripts';
import { JOB_LOG_SCRIPTS } from './job-log-scripts';
import { REPAIR_SCRIPTS } from './repair-scripts';
import { SCHEDULE_SCRIPTS } from './schedule-scripts';

/**
 * Every script EchoMQ runs, with its fixed number of KEYS. The Lua text lives in
 * TypeScript modules so it ships inside the compiled build; nothing is read from
 * disk at run time. ioredis runs each as EVALSHA and loads it on NOSCRIPT (after a
 * Redis restart or a failover), in pipelines and on clusters alike.
 */
export const SCRIPTS = {
  emqEnqueue: { lua: ENQUEUE_LUA, keys: 7 },
  emqClaim: { lua: CLAIM_LUA, keys: 9 },
  emqExtend: { lua: EXTEND_LUA, keys: 5 },
  emqComplete: { lua: COMPLETE_LUA, keys: 6 },
  emqFail: { lua: FAIL_LUA, keys: 10 },
  emqRelease: { lua: RELEASE_LUA, keys: 7 },
  emqReap: { lua: REAP_LUA, keys: 7 },
  emqPromote: { lua: PROMOTE_LUA, keys: 6 },
  emqRetry: { lua: RETRY_LUA, keys: 8 },
  emqRemove: { lua: REMOVE_LUA, keys: 10 },
  emqThrottle: { lua: THROTTLE_LUA, keys: 7 },
  emqHoldQueue: { lua: HOLD_QUEUE_LUA, keys: 1 },
  emqSetLimits: { lua: SET_LIMITS_LUA, keys: 4 },
  emqSetLane: { lua: SET_LANE_LUA, keys: 4 },
  emqPauseLane: { lua: PAUSE_LANE_LUA, keys: 4 },
  emqResumeLane: { lua: RESUME_LANE_LUA, keys: 5 },
  emqProgress: { lua: PROGRESS_LUA, keys: 3 },
  emqJobView: { lua: JOB_VIEW_LUA, keys: 6 },
  emqCountPending: { lua: COUNT_PENDING_LUA, keys: 1 },
  emqBrowsePending: { lua: BROWSE_PENDING_LUA, keys: 1 },
  emqReadLanes: { lua: READ_LANES_LUA, keys: 1 },
  emqRecordPartitions: { lua: RECORD_PARTITIONS_LUA, keys: 1 },
  emqDeadlines: { lua: DEADLINES_LUA, keys: 4 },
  ...SCHEDULE_SCRIPTS,
  ...CONTROL_SCRIPTS,
  ...DEDUPE_SCRIPTS,
  ...JOB_LOG_SCRIPTS,
  ...REPAIR_SCRIPTS,
} as const;

export type ScriptName = keyof typeof SCRIPTS;
export type RedisClient = Redis | Cluster;
type ScriptCall = (...args: (string | number)[]) => Promise<unknown>;
export type ScriptedClient = RedisClient & { readonly [K in ScriptName]: ScriptCall };

const INSTALLED = Symbol('echomq.scripts');

/** Defines every script as a command on the client (idempotent per client). */
export function installScripts(client: RedisClient): ScriptedClient {
  const marked = client as RedisClient & { [INSTALLED]?: true };
  if (!marked[INSTALLED]) {
    for (const [name, script] of Object.entries(SCRIPTS)) {
      client.defineCommand(name, { lua: script.lua, numberOfKeys: script.keys });
    }
    marked[INSTALLED] = true;
  }
  return client as ScriptedClient;
}
