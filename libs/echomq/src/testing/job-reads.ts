import { compareIds, type JobId } from '../ids';
import type { StateSet } from '../keyspace';
import { toJobView, type JobView } from '../queue/job-view';
import type { QueueService } from '../queue/queue.service';
import { readJobViews, type RedisClient, type ScriptContext } from '../scripts';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import { execAll } from '../connection/exec-all';

/** Most jobs read from one set: a test's queue holds far fewer; a bigger one is cut, not read whole. */
export const READ_MAX_PER_STATE = 10_000;

/**
 * The views of the jobs in the given sets, oldest first (mint order, which is enqueue
 * order), at most READ_MAX_PER_STATE per set. The ids are read at one instant, then the
 * views in pipelined batches; jobs that moved on in between are left out. A partitioned
 * queue is read partition after partition (each at its own instant, as one queue's reads are:
 * QueueService.browse) and merged by id.
 */
export async function readJobs<D, R>(
  queues: QueueService,
  queue: string,
  states: readonly StateSet[],
): Promise<JobView<D, R>[]> {
  const { physical } = await queues.partitionLayout(queue);
  const read = await Promise.all(
    physical.map(async (name) => {
      const ctx = queues.context(name);
      const members = await idsIn(
        ctx.redis,
        states.map((state) => ctx.keys.set(state)),
      );
      // A cut read can meet a job twice (it moved between two sets while they were read).
      const ids = [...new Set(members)].sort(compareIds) as JobId[];
      return viewsIn<D, R>(ctx, queue, ids);
    }),
  );
  const views = read.flat();
  return physical.length === 1 ? views : views.sort((a, b) => compareIds(a.id, b.id));
}

/**
 * The members of these sets. Read with one ZUNION, not a MULTI of ZRANGEs: a full Redis refuses
 * every command queued in a MULTI (reads too), and a single read command is one instant as much
 * as a MULTI is, so a job promoted from schedule to pending meanwhile is still seen, in one of
 * them. Sets past READ_MAX_PER_STATE (the sizes are only a guard: they need no instant) are cut
 * instead, each read on its own; a cut list is not a snapshot of the queue anyway.
 */
async function idsIn(redis: RedisClient, sets: readonly string[]): Promise<string[]> {
  if (sets.length === 0) return [];
  const sizes = sets.reduce((batch, set) => batch.zcard(set), redis.pipeline());
  const fits = ((await execAll(sizes, 'The sizes of the job sets')) as number[]).every(
    (size) => size <= READ_MAX_PER_STATE,
  );
  if (fits) return redis.zunion(sets.length, ...sets);
  const cut = sets.reduce((batch, set) => batch.zrange(set, 0, READ_MAX_PER_STATE - 1), redis.pipeline());
  return ((await execAll(cut, 'The job ids of the cut sets')) as string[][]).flat();
}

/**
 * The views of the given jobs that are still there (a completed job only while its row is
 * retained), in the order given: looked up where QueueService.getJobs looks (the partition an
 * id names, then the queue itself), SCRIPT_BATCH_MAX ids per call.
 */
export async function readJobsById<D, R>(
  queues: QueueService,
  queue: string,
  ids: readonly JobId[],
): Promise<JobView<D, R>[]> {
  const views: JobView<D, R>[] = [];
  for (let at = 0; at < ids.length; at += SCRIPT_BATCH_MAX) {
    for (const view of await queues.getJobs<D>(queue, ids.slice(at, at + SCRIPT_BATCH_MAX))) {
      // The row's result is parsed JSON; its type is the queue definition's promise.
      if (view) views.push(view as JobView<D, R>);
    }
  }
  return views;
}

/** The views of these jobs in one physical queue, named by `queue`; those not there are left out. */
async function viewsIn<D, R>(
  ctx: ScriptContext,
  queue: string,
  ids: readonly JobId[],
): Promise<JobView<D, R>[]> {
  const views: JobView<D, R>[] = [];
  for (let at = 0; at < ids.length; at += SCRIPT_BATCH_MAX) {
    const slice = ids.slice(at, at + SCRIPT_BATCH_MAX);
    const raws = await readJobViews(ctx, slice);
    raws.forEach((raw, index) => {
      // The row's result is parsed JSON; its type is the queue definition's promise.
      const view = toJobView<D>(queue, slice[index], raw) as JobView<D, R> | undefined;
      if (view) views.push(view);
    });
  }
  return views;
}
