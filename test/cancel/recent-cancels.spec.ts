import { RecentCancels } from '@app/echomq/worker/recent-cancels';

/** A clock the test moves by hand: age is checked without waiting. */
function clock(start = 1_000): { now: () => number; advance: (ms: number) => void } {
  let at = start;
  return { now: () => at, advance: (ms) => (at += ms) };
}

describe('RecentCancels: unmatched cancels, kept briefly and bounded', () => {
  it('gives a kept claim back once, and only for the same id and attempt', () => {
    const recent = new RecentCancels(1_000);
    recent.remember('a', 1);
    expect(recent.take('a', 2)).toBe(false);
    expect(recent.take('b', 1)).toBe(false);
    expect(recent.take('a', 1)).toBe(true);
    expect(recent.take('a', 1)).toBe(false);
    expect(recent.size).toBe(0);
  });

  it('forgets a claim once it is older than keepMs', () => {
    const time = clock();
    const recent = new RecentCancels(1_000, 100, time.now);
    recent.remember('old', 1);
    time.advance(600);
    recent.remember('young', 1);
    time.advance(400); // 'old' is 1,000 ms old now
    expect(recent.take('old', 1)).toBe(false);
    expect(recent.take('young', 1)).toBe(true);
  });

  it('keeps at most max claims, dropping the oldest first', () => {
    const time = clock();
    const recent = new RecentCancels(60_000, 3, time.now);
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      recent.remember(id, 1);
      time.advance(1);
    }
    expect(recent.size).toBe(3);
    expect(['a', 'b', 'c', 'd', 'e'].map((id) => recent.take(id, 1))).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
  });

  it('drops expired claims at the next remember, however many there are', () => {
    const time = clock();
    const recent = new RecentCancels(10, 1_000, time.now);
    for (let i = 0; i < 500; i++) recent.remember(`j${i}`, 1);
    time.advance(10);
    recent.remember('fresh', 1);
    expect(recent.size).toBe(1);
  });
});
