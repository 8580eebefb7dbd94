import type { JobId } from '../../ids';
import type { StateSet } from '../../keyspace';
import type { ScriptContext } from '../../scripts';
import { browseIds, checkBrowse, type BrowseOptions } from '../reads';
import { newestFirst, soonestFirst } from './partition-merge';

/**
 * browse over several partitions: each partition's page, merged into the queue's. Pending and
 * dead merge on the ids themselves, and `after` pages every partition from the same id, so
 * paging newest first is exact across them. Active and schedule are read with their scores and
 * merged soonest first. The state and options are checked once, before anything is sent.
 */
export async function browseAcross(
  contexts: readonly ScriptContext[],
  state: StateSet,
  options: BrowseOptions = {},
): Promise<JobId[]> {
  const { limit } = checkBrowse(state, options);
  if (contexts.length === 1) return browseIds(contexts[0], state, options);
  if (state === 'pending' || state === 'dead') {
    const pages = await Promise.all(contexts.map((ctx) => browseIds(ctx, state, options)));
    return newestFirst(pages, limit);
  }
  const scored = await Promise.all(
    contexts.map(async (ctx) => {
      const flat = await ctx.redis.zrange(ctx.keys.set(state), 0, limit - 1, 'WITHSCORES');
      const pairs: [JobId, number][] = [];
      for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i] as JobId, Number(flat[i + 1])]);
      return pairs;
    }),
  );
  return soonestFirst(scored, limit);
}
