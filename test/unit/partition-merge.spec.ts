import fc from 'fast-check';
import { JOB_IDS, SnowflakeMinter, type JobId } from '@app/echomq/internal';
import {
  mergeLanes,
  newestFirst,
  soonestFirst,
  sumFields,
} from '@app/echomq/queue/partitions/partition-merge';

const mint = JOB_IDS.minter(new SnowflakeMinter(4)) as () => JobId;

/** Ids dealt out to `lists` partitions, each list newest first as one partition's browse gives it. */
const dealt = fc
  .tuple(fc.integer({ min: 1, max: 5 }), fc.array(fc.nat(), { maxLength: 60 }))
  .map(([lists, picks]) => {
    const ids = picks.map(() => mint());
    const partitions: JobId[][] = Array.from({ length: lists }, () => []);
    ids.forEach((id, index) => partitions[picks[index] % lists].push(id));
    return { ids, partitions: partitions.map((list) => [...list].reverse()) };
  });

describe('merging the reads of several partitions', () => {
  it('newestFirst is the newest `limit` ids of all partitions, in id order', () => {
    fc.assert(
      fc.property(dealt, fc.integer({ min: 1, max: 70 }), ({ ids, partitions }, limit) => {
        expect(newestFirst(partitions, limit)).toEqual([...ids].reverse().slice(0, limit));
      }),
    );
  });

  it('soonestFirst orders by score, then by id, and keeps `limit`', () => {
    const [a, b, c, d] = [mint(), mint(), mint(), mint()];
    const lists: [JobId, number][][] = [
      [
        [c, 10],
        [a, 30],
      ],
      [
        [d, 10],
        [b, 20],
      ],
    ];
    expect(soonestFirst(lists, 10)).toEqual([c, d, b, a]);
    expect(soonestFirst(lists, 2)).toEqual([c, d]);
  });

  it('sums counters field by field, a field one partition lacks counting as 0', () => {
    const partitions: Record<string, number>[] = [{ enqueued: 2, claimed: 1 }, { enqueued: 3 }, {}];
    expect(sumFields(partitions)).toEqual({ enqueued: 5, claimed: 1 });
  });

  it('lists a lane found in two partitions once, its jobs summed, paused if paused anywhere', () => {
    const lane = (name: string, pending: number, active: number, paused = false) => ({
      lane: name,
      pending,
      active,
      paused,
      held: paused,
      weight: 1,
      concurrency: null,
    });
    expect(mergeLanes([[lane('b', 1, 0), lane('a', 2, 1)], [lane('a', 0, 4, true)]])).toEqual([
      { ...lane('a', 2, 5), paused: true, held: true },
      lane('b', 1, 0),
    ]);
  });
});
