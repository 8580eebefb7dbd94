import fc from 'fast-check';
import { Redis } from 'ioredis';
import {
  BROWSE_MAX,
  InvalidArgumentError,
  InvalidJobIdError,
  PENDING_BROWSE_MAX,
  browsePending,
  countPending,
  enqueueJobs,
  installScripts,
  pauseLane,
  type NewJobRecord,
  type ScriptContext,
} from '@app/echomq/internal';
import { jobRecord } from '../support/assertions';
import { claimSome } from '../support/claims';
import { connect, idMinter, redisUrl, scriptContext, uniqueQueue } from '../support/redis';

/** Where a job waits: its lane and priority level. */
type Place = readonly [lane: string, priority: number];

/** Every key of a queue with its DUMP, to show a read wrote nothing. */
async function dumpQueue(redis: Redis, ctx: ScriptContext): Promise<Record<string, string>> {
  const keys = await redis.keys(`${ctx.keys.base}*`);
  const out: Record<string, string> = {};
  for (const key of keys.sort()) out[key] = (await redis.dumpBuffer(key)).toString('hex');
  return out;
}

describe('pending reads: counts and browse across lanes and levels', () => {
  let redis: Redis;
  const mint = idMinter(41);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  /** Enqueues one job per place, in order (so ids are minted in that order); returns the ids. */
  async function enqueueAt(ctx: ScriptContext, places: readonly Place[]): Promise<string[]> {
    const records: NewJobRecord[] = places.map(([lane, priority]) => jobRecord(mint(), { lane, priority }));
    for (let i = 0; i < records.length; i += 100) {
      await enqueueJobs(ctx, records.slice(i, i + 100), 60_000);
    }
    return records.map((record) => record.id);
  }

  function newestFirst(ids: readonly string[]): string[] {
    return [...ids].reverse();
  }

  /** Pages through a browse with `after` until it comes back empty. */
  async function pageAll(
    ctx: ScriptContext,
    scope: { lane?: string; priority?: number },
    limit: number,
  ): Promise<string[][]> {
    const pages: string[][] = [];
    let after: string | undefined;
    for (;;) {
      const page = await browsePending(ctx, { ...scope, limit, ...(after ? { after } : {}) });
      if (page.length === 0) return pages;
      pages.push(page);
      after = page.at(-1);
    }
  }

  describe('a queue without lanes or priorities', () => {
    const ctx = () => scriptContext(redis, uniqueQueue('plain'));

    it('counts and browses the plain pending set, newest first', async () => {
      const c = ctx();
      const ids = await enqueueAt(
        c,
        Array.from({ length: 5 }, (): Place => ['default', 0]),
      );
      expect(await countPending(c)).toBe(5);
      expect(await browsePending(c, { limit: 3 })).toEqual(newestFirst(ids).slice(0, 3));
      expect(await pageAll(c, {}, 2)).toEqual([[ids[4], ids[3]], [ids[2], ids[1]], [ids[0]]]);
    });

    it('an empty queue counts 0 and browses nothing', async () => {
      const c = ctx();
      expect(await countPending(c)).toBe(0);
      expect(await browsePending(c, { limit: 10 })).toEqual([]);
      expect(await browsePending(c, { lane: 'tenant-a', limit: 10 })).toEqual([]);
    });
  });

  describe('jobs spread over lanes and levels', () => {
    const PLACES: Place[] = [
      ['default', 0],
      ['tenant-a', 0],
      ['default', 3],
      ['tenant-b', 5],
      ['tenant-a', 9],
      ['tenant-a', 0],
      ['tenant-b', 0],
      ['default', 0],
      ['tenant-a', 9],
      ['tenant-c', 5],
      ['default', 3],
      ['tenant-a', 0],
    ];
    let c: ScriptContext;
    let ids: string[];
    const where = (pick: (place: Place) => boolean): string[] =>
      newestFirst(ids.filter((_, i) => pick(PLACES[i])));

    beforeAll(async () => {
      c = scriptContext(redis, uniqueQueue('spread'));
      ids = await enqueueAt(c, PLACES);
    });

    it('counts every lane and level once', async () => {
      expect(await countPending(c)).toBe(PLACES.length);
    });

    it('browses the whole queue merged newest first, by id, whatever the lane or level', async () => {
      expect(await browsePending(c, { limit: 100 })).toEqual(newestFirst(ids));
      expect(await browsePending(c, { limit: 4 })).toEqual(newestFirst(ids).slice(0, 4));
    });

    it('pages with after visit every id exactly once, in order', async () => {
      for (const limit of [1, 2, 5, 7]) {
        const pages = await pageAll(c, {}, limit);
        expect(pages.flat()).toEqual(newestFirst(ids));
        expect(pages.every((page) => page.length <= limit)).toBe(true);
      }
    });

    it("with a lane, merges that lane's levels", async () => {
      expect(await browsePending(c, { lane: 'tenant-a', limit: 100 })).toEqual(
        where(([lane]) => lane === 'tenant-a'),
      );
      expect((await pageAll(c, { lane: 'tenant-a' }, 2)).flat()).toEqual(
        where(([lane]) => lane === 'tenant-a'),
      );
    });

    it("with the default lane, reads the plain pending set and the default lane's other levels", async () => {
      expect(await browsePending(c, { lane: 'default', limit: 100 })).toEqual(
        where(([lane]) => lane === 'default'),
      );
      expect(await browsePending(c, { lane: 'default', priority: 0, limit: 100 })).toEqual(
        where(([lane, level]) => lane === 'default' && level === 0),
      );
    });

    it('with a lane and a priority, reads that one set', async () => {
      expect(await browsePending(c, { lane: 'tenant-a', priority: 9, limit: 100 })).toEqual(
        where(([lane, level]) => lane === 'tenant-a' && level === 9),
      );
      expect(await browsePending(c, { lane: 'tenant-a', priority: 4, limit: 100 })).toEqual([]);
    });

    it("with a priority alone, merges every lane's set at that level", async () => {
      expect(await browsePending(c, { priority: 5, limit: 100 })).toEqual(where(([, level]) => level === 5));
      expect(await browsePending(c, { priority: 0, limit: 100 })).toEqual(where(([, level]) => level === 0));
    });

    it('a lane that is not there browses nothing', async () => {
      expect(await browsePending(c, { lane: 'tenant-z', limit: 100 })).toEqual([]);
    });

    it('the reads write nothing', async () => {
      const before = await dumpQueue(redis, c);
      await countPending(c);
      await browsePending(c, { limit: 100 });
      await browsePending(c, { lane: 'tenant-a', limit: 3, after: ids[8] });
      await browsePending(c, { priority: 0, limit: 2 });
      expect(await dumpQueue(redis, c)).toEqual(before);
    });
  });

  it("a held lane's jobs still count and browse (its levels are noted in held, not in ready)", async () => {
    const c = scriptContext(redis, uniqueQueue('held'));
    const places: Place[] = [
      ['tenant-a', 0],
      ['tenant-h', 2],
      ['default', 0],
      ['tenant-h', 0],
      ['tenant-h', 2],
    ];
    const ids = await enqueueAt(c, places);
    await pauseLane(c, 'tenant-h');
    expect(await redis.hget(c.keys.held, 'tenant-h')).toMatch(/^(02|20)$/);
    expect(await redis.zscore(c.keys.ready(2), 'tenant-h')).toBeNull();

    expect(await countPending(c)).toBe(5);
    expect(await browsePending(c, { limit: 10 })).toEqual(newestFirst(ids));
    expect(await browsePending(c, { priority: 2, limit: 10 })).toEqual([ids[4], ids[1]]);
  });

  it('claimed jobs leave the count and the browse', async () => {
    const c = scriptContext(redis, uniqueQueue('claimed'));
    const ids = await enqueueAt(c, [
      ['tenant-a', 0],
      ['tenant-b', 7],
      ['tenant-a', 7],
    ]);
    const [claimed] = await claimSome(c, 1);
    expect(await countPending(c)).toBe(2);
    const left = newestFirst(ids).filter((id) => id !== claimed.id);
    expect(await browsePending(c, { limit: 10 })).toEqual(left);
  });

  it('any spread of jobs over many sets browses as one id-ordered list, page by page', async () => {
    const place = fc.tuple(
      fc.constantFrom('default', 't1', 't2', 't3', 't4', 't5'),
      fc.integer({ min: 0, max: 9 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(place, { minLength: 0, maxLength: 150 }),
        fc.integer({ min: 1, max: 40 }),
        async (places, limit) => {
          const c = scriptContext(redis, uniqueQueue('spread-prop'));
          const ids = await enqueueAt(c, places);
          expect(await countPending(c)).toBe(ids.length);
          expect((await pageAll(c, {}, limit)).flat()).toEqual(newestFirst(ids));
          const lane = places[0]?.[0] ?? 't1';
          expect((await pageAll(c, { lane }, limit)).flat()).toEqual(
            newestFirst(ids.filter((_, i) => places[i][0] === lane)),
          );
        },
      ),
      { numRuns: 25 },
    );
  });

  it('a browse of at most the queue-wide BROWSE_MAX ids', async () => {
    expect(PENDING_BROWSE_MAX).toBe(BROWSE_MAX);
  });

  describe('bad options throw before anything is sent', () => {
    // A client that never connects and queues nothing: a call that reached the wire would
    // fail with a connection error instead of the typed one.
    let offline: Redis;
    let c: ScriptContext;

    beforeAll(() => {
      offline = new Redis(redisUrl(), { lazyConnect: true, enableOfflineQueue: false });
      c = { ...scriptContext(redis, uniqueQueue('bad')), redis: installScripts(offline) };
    });
    afterAll(() => {
      offline.disconnect();
    });

    it.each([
      ['limit 0', { limit: 0 }],
      ['limit past the maximum', { limit: PENDING_BROWSE_MAX + 1 }],
      ['a fractional limit', { limit: 2.5 }],
      ['a lane with a space', { lane: 'bad lane', limit: 1 }],
      ['an empty lane', { lane: '', limit: 1 }],
      ['a lane of 65 characters', { lane: 'x'.repeat(65), limit: 1 }],
      ['priority 10', { priority: 10, limit: 1 }],
      ['a negative priority', { lane: 'a', priority: -1, limit: 1 }],
    ])('%s', async (_, options) => {
      await expect(browsePending(c, options)).rejects.toBeInstanceOf(InvalidArgumentError);
    });

    it('an after that is not a job id', async () => {
      await expect(browsePending(c, { limit: 1, after: 'JOB-not-an-id' })).rejects.toBeInstanceOf(
        InvalidJobIdError,
      );
    });
  });
});
