import { InvalidArgumentError, type QueueService } from '@app/echomq/internal';
import type { ListItem, ListSource } from './list-sources';

/**
 * A cursor into a set ordered by score (active by lease deadline, schedule by run-at): the score
 * of the last member shown and, for each physical queue of the queue (its slot in the layout's
 * `physical` list), how many of its members with that score were shown. Members with equal scores
 * are in byte order within a set, and the listing merges the sets on (score, id), so "skip n at
 * this score" in each set continues exactly while those members stay (a member leaving the tie
 * meanwhile shifts the page by one, which a dashboard can bear).
 *
 * Written `<score>:<n>` when only the first slot (the queue itself; an unpartitioned queue has no
 * other) skips any, else `<score>:<slot>.<n>,<slot>.<n>...` with the slots that skip some.
 */
interface ScoreCursor {
  readonly score: string;
  /** Members at `score` already shown, by slot. */
  readonly skips: ReadonlyMap<number, number>;
}

const SCORE = /^(-?\d{1,16}(?:\.\d{1,17})?(?:e[+-]?\d{1,3})?):(.{1,200})$/i;
const PLAIN_SKIP = /^\d{1,7}$/;
const SLOT_SKIP = /^(\d{1,2})\.(\d{1,7})$/;
/** Slots a cursor may name: a queue's own and at most 16 partitions (MAX_PARTITIONS). */
const SLOTS_MAX = 17;

function refused(): never {
  throw new InvalidArgumentError('after must be the `next` of the previous page');
}

/** Reads a cursor written by formatScoreCursor; InvalidArgumentError for anything else. */
export function parseScoreCursor(cursor: string): ScoreCursor {
  const match = SCORE.exec(cursor);
  if (!match || !Number.isFinite(Number(match[1]))) refused();
  const [, score, rest] = match;
  if (PLAIN_SKIP.test(rest)) return { score, skips: new Map([[0, Number(rest)]]) };
  const skips = new Map<number, number>();
  for (const part of rest.split(',')) {
    const slot = SLOT_SKIP.exec(part);
    if (!slot || Number(slot[1]) >= SLOTS_MAX || skips.has(Number(slot[1]))) refused();
    skips.set(Number(slot[1]), Number(slot[2]));
  }
  return { score, skips };
}

export function formatScoreCursor(score: string, skips: ReadonlyMap<number, number>): string {
  const slots = [...skips].filter(([, n]) => n > 0).sort(([a], [b]) => a - b);
  if (slots.every(([slot]) => slot === 0)) return `${score}:${skips.get(0) ?? 0}`;
  return `${score}:${slots.map(([slot, n]) => `${slot}.${n}`).join(',')}`;
}

interface Scored {
  readonly id: string;
  readonly score: string;
  readonly value: number;
  readonly slot: number;
}

/**
 * Active or schedule, soonest first, continued after a cursor: each physical queue of the queue
 * is read from the cursor's score past the members it already showed there (`count` at most,
 * which is all the merged page can take from it), and the pages merge on (score, id). One
 * ZRANGE per physical queue per call; an unpartitioned queue is one set, read as before.
 */
export function byScore(queues: QueueService, queue: string, state: 'active' | 'schedule'): ListSource {
  return async (cursor, count) => {
    const from =
      cursor === undefined ? { score: '-inf', skips: new Map<number, number>() } : parseScoreCursor(cursor);
    const { physical } = await queues.partitionLayout(queue);
    const pages = await Promise.all(
      physical.map(async (name, slot): Promise<Scored[]> => {
        const ctx = queues.context(name);
        const flat = await ctx.redis.zrange(
          ctx.keys.set(state),
          from.score,
          '+inf',
          'BYSCORE',
          'LIMIT',
          from.skips.get(slot) ?? 0,
          count,
          'WITHSCORES',
        );
        const page: Scored[] = [];
        for (let i = 0; i < flat.length; i += 2)
          page.push({ id: flat[i], score: flat[i + 1], value: Number(flat[i + 1]), slot });
        return page;
      }),
    );
    const merged = pages
      .flat()
      .sort((a, b) => a.value - b.value || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, count);
    return cursorsAlong(merged, from);
  };
}

/** Each member with the cursor that continues right after it. */
function cursorsAlong(merged: readonly Scored[], from: ScoreCursor): ListItem[] {
  let score = from.score;
  let skips = new Map(from.skips);
  return merged.map(({ id, score: at, slot }) => {
    if (at !== score) {
      score = at;
      skips = new Map();
    }
    skips.set(slot, (skips.get(slot) ?? 0) + 1);
    return { id, cursor: formatScoreCursor(score, skips) };
  });
}
