import type { ScriptContext } from './context';

export type JobState = 'pending' | 'active' | 'schedule' | 'dead' | 'completed' | 'unknown';

export interface RawJobView {
  readonly state: JobState;
  /** The score in the set that holds the job (lease deadline, run-at, or 0), or null. */
  readonly score: number | null;
  readonly fields: Readonly<Record<string, string>>;
}

export async function readJobView(ctx: ScriptContext, id: string): Promise<RawJobView> {
  const { keys } = ctx;
  const [state, score, flat] = (await ctx.redis.emqJobView(
    keys.pending,
    keys.active,
    keys.schedule,
    keys.dead,
    keys.job(id),
    id,
  )) as [JobState, string, string[]];
  const fields: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
  return { state, score: score === '' ? null : Number(score), fields };
}
