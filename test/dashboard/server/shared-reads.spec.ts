import type { ApiConfig } from '../../../apps/api/src/config/api-config';
import type { ListPage, ListRequest } from '../../../apps/api/src/dashboard/lists/filtered-list';
import { SharedListReads } from '../../../apps/api/src/dashboard/lists/shared-reads';

/** Shared first pages on a fake clock: which requests share a read, and when an event makes the next one. */
describe('shared first pages of job lists', () => {
  const INTERVAL_MS = 2_000;
  const config = { dashboardRefreshMs: INTERVAL_MS } as ApiConfig;
  const pending: ListRequest = { state: 'pending', limit: 50 };
  let loads: number;
  const load = (): Promise<ListPage> => {
    loads += 1;
    return Promise.resolve({ jobs: [], next: String(loads) });
  };
  let reads: SharedListReads;

  beforeEach(() => {
    jest.useFakeTimers();
    loads = 0;
    reads = new SharedListReads(config);
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('shares a first page between identical requests, not a later page or an unshareable read', async () => {
    await Promise.all([1, 2, 3].map(() => reads.read('q', pending, true, load)));
    expect(loads).toBe(1);
    await reads.read('q', { ...pending, name: 'x' }, true, load);
    await reads.read('q', { ...pending, after: 'JOB' }, true, load);
    await reads.read('q', pending, false, load);
    expect(loads).toBe(4);
  });

  it('reads again at once after the interval, and keeps sharing through events of other sets', async () => {
    await reads.read('q', pending, true, load);
    for (const type of ['completed', 'dead', 'lane-paused', 'progress']) reads.touch('q', type);
    reads.touch('other', 'enqueued');
    await reads.read('q', pending, true, load);
    expect(loads).toBe(1);
    jest.advanceTimersByTime(INTERVAL_MS);
    expect((await reads.read('q', pending, true, load)).next).toBe('2');
  });

  it('after an event that touches its set, makes one read at the end of the interval for every asker', async () => {
    await reads.read('q', pending, true, load);
    reads.touch('q', 'enqueued');
    const waiting = [1, 2, 3, 4].map(() => reads.read('q', pending, true, load));
    expect(loads).toBe(1); // nothing read before the interval ends
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    const answers = await Promise.all(waiting);
    expect(loads).toBe(2);
    expect(answers.map((answer) => answer.next)).toEqual(['2', '2', '2', '2']);
    // That read is fresh: shared until the next event.
    await reads.read('q', pending, true, load);
    expect(loads).toBe(2);
    // A type this table does not know may touch anything.
    reads.touch('q', 'some-new-event');
    const next = reads.read('q', pending, true, load);
    await jest.advanceTimersByTimeAsync(INTERVAL_MS);
    expect((await next).next).toBe('3');
  });

  it('forgets a queue that is no longer followed, and never shares a failed read', async () => {
    await reads.read('q', pending, true, load);
    reads.forget('q');
    await reads.read('q', pending, true, load);
    expect(loads).toBe(2);
    const failing = () => {
      loads += 1;
      return Promise.reject(new Error('down'));
    };
    const done = { ...pending, state: 'completed' as const };
    await expect(reads.read('q', done, true, failing)).rejects.toThrow('down');
    await expect(reads.read('q', done, true, failing)).rejects.toThrow('down');
    expect(loads).toBe(4);
  });
});
