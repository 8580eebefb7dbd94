import type { ScriptContext } from './context';
import { runScript } from './run-script';

/**
 * Where a job is: one of the four sets, completed (a finished row kept in no set), unknown
 * (no row), or orphan (a row in no set that never finished: invariant 2 is broken; readers
 * treat it as unknown, remove cleans it up).
 */
export type JobState = 'pending' | 'active' | 'schedule' | 'dead' | 'completed' | 'unknown' | 'orphan';

export interface RawJobView {
  readonly state: JobState;
  /** The score in the set that holds the job (lease deadline, run-at, or 0), or null. */
  readonly score: number | null;
  readonly fields: Readonly<Record<string, string>>;
}

type JobViewReply = [JobState, string, string[]];

function parseJobView([state, score, flat]: JobViewReply): RawJobView {
  const fields: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
  return { state, score: score === '' ? null : Number(score), fields };
}

function jobViewKeys({ keys }: ScriptContext, id: string): string[] {
  return [keys.fence, keys.pending, keys.active, keys.schedule, keys.dead, keys.job(id)];
}

export async function readJobView(ctx: ScriptContext, id: string): Promise<RawJobView> {
  const reply = await runScript(ctx, 'emqJobView', jobViewKeys(ctx, id), [id]);
  return parseJobView(reply as JobViewReply);
}

/** Views of many jobs of one queue in one pipelined round trip. */
export async function readJobViews(ctx: ScriptContext, ids: readonly string[]): Promise<RawJobView[]> {
  const pipeline = ctx.redis.pipeline() as unknown as Record<'emqJobView', (...args: string[]) => void> & {
    exec(): Promise<[Error | null, unknown][] | null>;
  };
  for (const id of ids) {
    pipeline.emqJobView(...jobViewKeys(ctx, id), id);
  }
  const replies = (await pipeline.exec()) ?? [];
  return replies.map(([error, reply]) => {
    if (error) throw error;
    return parseJobView(reply as JobViewReply);
  });
}
