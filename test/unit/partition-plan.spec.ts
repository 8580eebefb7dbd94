import fc from 'fast-check';
import { JOB_IDS, MAX_PARTITIONS, SnowflakeMinter, partitionTagOf } from '@app/echomq/internal';
import {
  pinnedPartition,
  planEnqueue,
  schedulePartition,
  targetFor,
} from '@app/echomq/queue/partitions/enqueue-plan';
import {
  candidatesForId,
  directLayout,
  partitionLayout,
  targetOf,
} from '@app/echomq/queue/partitions/partition-layout';
import { bucketOf, RoundRobin } from '@app/echomq/queue/partitions/partition-routing';

/** A RoundRobin whose picks are scripted, to see exactly when the plan asks for one. */
class ScriptedTurns extends RoundRobin {
  readonly asked: number[] = [];
  constructor(private readonly picks: number[]) {
    super();
  }
  override pick(count: number): number {
    this.asked.push(count);
    return this.picks.shift() ?? 0;
  }
}

const mint = JOB_IDS.minter(new SnowflakeMinter(3));

describe('partition layout', () => {
  it('is the queue itself when it never had more than one partition', () => {
    expect(partitionLayout('emails', 1, 1)).toEqual({
      queue: 'emails',
      count: 1,
      physical: ['emails'],
      partitioned: false,
    });
  });

  it('covers the queue itself and every partition it ever had, new jobs going to the declared count', () => {
    expect(partitionLayout('emails', 3, 3).physical).toEqual(['emails', 'emails#0', 'emails#1', 'emails#2']);
    // Lowered from 5 to 2: #2..#4 still drain, so reads and lookups still cover them.
    const lowered = partitionLayout('emails', 2, 5);
    expect(lowered).toMatchObject({ count: 2, partitioned: true });
    expect(lowered.physical).toEqual(['emails', 'emails#0', 'emails#1', 'emails#2', 'emails#3', 'emails#4']);
    // Back to 1 after being partitioned: new jobs go to the queue itself, old partitions still covered.
    expect(partitionLayout('emails', 1, 3)).toMatchObject({ count: 1, partitioned: true });
  });

  it('addresses a partition named directly as a queue of its own, whose jobs carry its index', () => {
    const direct = directLayout('emails#1');
    expect(direct).toEqual({ queue: 'emails#1', count: 1, physical: ['emails#1'], partitioned: false });
    expect(targetOf(direct, undefined)).toEqual({ queue: 'emails#1', tag: 1 });
    expect(targetOf(partitionLayout('emails', 1, 1), undefined)).toEqual({ queue: 'emails' });
    expect(targetOf(partitionLayout('emails', 3, 3), 2)).toEqual({ queue: 'emails#2', tag: 2 });
  });
});

describe('candidatesForId: where a lookup by id goes', () => {
  it('asks the partition the id names, then the queue itself: never more than two', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: MAX_PARTITIONS }), fc.nat(), (count, seed) => {
        const tag = seed % count;
        const id = mint(tag);
        expect(partitionTagOf(id)).toBe(tag);
        expect(candidatesForId(partitionLayout('q', count, count), id)).toEqual([`q#${tag}`, 'q']);
      }),
    );
  });

  it('asks only the queue itself when it is not partitioned, or when the id names no partition it has', () => {
    expect(candidatesForId(partitionLayout('q', 1, 1), mint(2))).toEqual(['q']);
    // An old job's id naming partition 7 of a queue that has 3: only the queue itself can hold it.
    expect(candidatesForId(partitionLayout('q', 3, 3), mint(7))).toEqual(['q']);
    // Lowered from 5 to 2: partition 4 still exists and is still asked.
    expect(candidatesForId(partitionLayout('q', 2, 5), mint(4))).toEqual(['q#4', 'q']);
    expect(candidatesForId(directLayout('q#1'), mint(1))).toEqual(['q#1']);
  });

  it('asks the queue itself first once the count is back to 1: its new jobs are there', () => {
    const back = partitionLayout('q', 1, 3);
    expect(candidatesForId(back, mint(2))).toEqual(['q', 'q#2']);
    expect(candidatesForId(back, mint(5))).toEqual(['q']);
    // Still partitioned over several: the partition the id names first.
    expect(candidatesForId(partitionLayout('q', 2, 3), mint(2))).toEqual(['q#2', 'q']);
  });
});

describe("schedulePartition: a new schedule's partition", () => {
  it("is its template's lane's, else its key's hash", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: MAX_PARTITIONS }),
        fc.string(),
        fc.string(),
        (count, key, lane) => {
          const expected =
            lane === 'default' ? bucketOf(`schedule:${key}`, count) : bucketOf(`lane:${lane}`, count);
          expect(schedulePartition(key, { lane, data: 1 }, count)).toBe(expected);
        },
      ),
    );
    expect(schedulePartition('nightly', undefined, 5)).toBe(bucketOf('schedule:nightly', 5));
    expect(schedulePartition('nightly', { data: 1 }, 5)).toBe(bucketOf('schedule:nightly', 5));
    // A lane of the wrong type pins nothing (the upsert refuses it before anything is sent).
    expect(schedulePartition('nightly', { lane: 7 }, 5)).toBe(bucketOf('schedule:nightly', 5));
  });
});

describe('pinnedPartition: what decides a job partition', () => {
  it('pins a named lane to its hash, whatever the keys', () => {
    const job = { lane: 'tenant-1', idempotencyKey: 'order-42' };
    expect(pinnedPartition(job, 3)).toBe(bucketOf('lane:tenant-1', 3));
    expect(pinnedPartition({ lane: 'tenant-1' }, 16)).toBe(bucketOf('lane:tenant-1', 16));
  });

  it('pins an idempotency, debounce or throttle key to the hash of the key', () => {
    const at = bucketOf('key:order-42', 5);
    expect(pinnedPartition({ idempotencyKey: 'order-42' }, 5)).toBe(at);
    expect(pinnedPartition({ debounce: { key: 'order-42', windowMs: 10 } }, 5)).toBe(at);
    expect(pinnedPartition({ throttle: { key: 'order-42', windowMs: 10 } }, 5)).toBe(at);
    // The default lane pins nothing, so the key decides.
    expect(pinnedPartition({ lane: 'default', idempotencyKey: 'order-42' }, 5)).toBe(at);
  });

  it('pins nothing without a lane or key, for one partition, or for fields of the wrong type', () => {
    expect(pinnedPartition({ data: 1 }, 3)).toBeUndefined();
    expect(pinnedPartition({ lane: 'tenant-1' }, 1)).toBeUndefined();
    expect(pinnedPartition({ lane: 7, idempotencyKey: 8 }, 3)).toBeUndefined();
    expect(pinnedPartition(null, 3)).toBeUndefined();
    expect(pinnedPartition('job', 3)).toBeUndefined();
  });
});

describe('planEnqueue: a batch over the partitions', () => {
  const layout = partitionLayout('q', 3, 3);

  it('sends a batch of unpinned jobs whole to one partition, with one pick for the call', () => {
    const turns = new ScriptedTurns([2]);
    expect(planEnqueue(layout, [{ data: 1 }, { data: 2 }, { data: 3 }], turns)).toEqual([
      { target: { queue: 'q#2', tag: 2 }, items: [0, 1, 2] },
    ]);
    expect(turns.asked).toEqual([3]);
  });

  it('splits a batch by lane and key, in partition order, each group in input order', () => {
    const lane = (name: string) => ({ lane: name, data: null });
    const lanes = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((name) => lane(name));
    const jobs = [...lanes, { data: 'loose' }, { idempotencyKey: 'k1' }, ...lanes];
    const turns = new ScriptedTurns([1]);
    const plan = planEnqueue(layout, jobs, turns);
    // Only the one unpinned job asked for a pick.
    expect(turns.asked).toEqual([3]);
    const tags = plan.map((group) => group.target.tag!);
    expect(tags).toEqual([...tags].sort((a, b) => a - b));
    const where = new Map<number, number>();
    for (const group of plan) {
      expect(group.target.queue).toBe(`q#${group.target.tag}`);
      expect([...group.items].sort((a, b) => a - b)).toEqual(group.items);
      for (const item of group.items) where.set(item, group.target.tag!);
    }
    expect([...where.keys()].sort((a, b) => a - b)).toEqual(jobs.map((_, index) => index));
    jobs.forEach((job, index) => {
      const expected =
        'lane' in job ? bucketOf(`lane:${job.lane}`, 3) : 'idempotencyKey' in job ? bucketOf('key:k1', 3) : 1;
      expect(where.get(index)).toBe(expected);
    });
    expect(new Set(where.values()).size).toBe(3);
  });

  it('asks for no pick when every job is pinned, and puts everything in the queue itself when unpartitioned', () => {
    const turns = new ScriptedTurns([]);
    planEnqueue(layout, [{ lane: 'a' }, { idempotencyKey: 'x' }], turns);
    expect(turns.asked).toEqual([]);
    expect(planEnqueue(partitionLayout('q', 1, 1), [{ lane: 'a' }, {}], turns)).toEqual([
      { target: { queue: 'q' }, items: [0, 1] },
    ]);
    expect(turns.asked).toEqual([]);
  });

  it('targets one job like the batch would: pinned, else a pick', () => {
    const turns = new ScriptedTurns([0]);
    expect(targetFor(layout, { lane: 'tenant-1' }, turns)).toEqual({
      queue: `q#${bucketOf('lane:tenant-1', 3)}`,
      tag: bucketOf('lane:tenant-1', 3),
    });
    expect(turns.asked).toEqual([]);
    expect(targetFor(layout, {}, turns)).toEqual({ queue: 'q#0', tag: 0 });
    expect(turns.asked).toEqual([3]);
  });
});
