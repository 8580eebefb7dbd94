import { assertCron, cronRunAfter, InvalidArgumentError, nextRunAt } from '@app/echomq/internal';

/** The cron adapter (schedules/cron-next.ts) and the next run-at rules, computed, never waited for. */
describe('cron-next: first run strictly after an instant', () => {
  const at = (iso: string): number => Date.parse(iso);
  const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
  const runs = (pattern: string, tz: string, fromIso: string, count: number): string[] => {
    const out: string[] = [];
    let t = at(fromIso);
    for (let i = 0; i < count; i++) {
      t = cronRunAfter(pattern, tz, t)!;
      out.push(new Date(t).toISOString());
    }
    return out;
  };

  it('is strictly after the instant, in UTC by default', () => {
    expect(iso(cronRunAfter('0 * * * *', 'UTC', at('2025-01-01T10:00:00Z')))).toBe(
      '2025-01-01T11:00:00.000Z',
    );
    expect(iso(cronRunAfter('0 * * * *', 'UTC', at('2025-01-01T09:59:59.999Z')))).toBe(
      '2025-01-01T10:00:00.000Z',
    );
    expect(iso(cronRunAfter('* * * * * *', 'UTC', at('2025-01-01T00:00:01Z')))).toBe(
      '2025-01-01T00:00:02.000Z',
    );
  });

  it('Europe/Berlin spring forward: 02:30 does not exist, the run moves to 03:00 CEST', () => {
    // 2025-03-30: 02:00 CET jumps to 03:00 CEST (01:00 UTC).
    expect(runs('30 2 * * *', 'Europe/Berlin', '2025-03-29T12:00:00Z', 3)).toEqual([
      '2025-03-30T01:00:00.000Z', // 03:00 CEST, the first valid time after the gap
      '2025-03-31T00:30:00.000Z', // 02:30 CEST
      '2025-04-01T00:30:00.000Z',
    ]);
    // An interval pattern skips the missing hour.
    expect(runs('*/30 * * * *', 'Europe/Berlin', '2025-03-30T00:20:00Z', 3)).toEqual([
      '2025-03-30T00:30:00.000Z', // 01:30 CET
      '2025-03-30T01:00:00.000Z', // 03:00 CEST
      '2025-03-30T01:30:00.000Z', // 03:30 CEST
    ]);
  });

  it('Europe/Berlin fall back: 02:30 happens twice, a fixed-time run runs once', () => {
    // 2025-10-26: 03:00 CEST goes back to 02:00 CET (01:00 UTC).
    expect(runs('30 2 * * *', 'Europe/Berlin', '2025-10-25T12:00:00Z', 2)).toEqual([
      '2025-10-26T00:30:00.000Z', // 02:30 CEST, the first of the two
      '2025-10-27T01:30:00.000Z', // 02:30 CET the next day: not a second run on the 26th
    ]);
    // An interval pattern runs in both repeated hours.
    expect(runs('30 * * * *', 'Europe/Berlin', '2025-10-25T23:50:00Z', 3)).toEqual([
      '2025-10-26T00:30:00.000Z', // 02:30 CEST
      '2025-10-26T01:30:00.000Z', // 02:30 CET
      '2025-10-26T02:30:00.000Z', // 03:30 CET
    ]);
  });

  it('America/New_York: both transitions, and the offset either side', () => {
    // 2025-03-09: 02:00 EST jumps to 03:00 EDT; 2025-11-02: 02:00 EDT back to 01:00 EST.
    expect(runs('30 2 * * *', 'America/New_York', '2025-03-08T12:00:00Z', 2)).toEqual([
      '2025-03-09T07:00:00.000Z', // 03:00 EDT
      '2025-03-10T06:30:00.000Z', // 02:30 EDT
    ]);
    expect(runs('30 1 * * *', 'America/New_York', '2025-11-01T12:00:00Z', 2)).toEqual([
      '2025-11-02T05:30:00.000Z', // 01:30 EDT, once
      '2025-11-03T06:30:00.000Z', // 01:30 EST
    ]);
    expect(iso(cronRunAfter('0 9 * * 1', 'America/New_York', at('2025-07-01T00:00:00Z')))).toBe(
      '2025-07-07T13:00:00.000Z',
    );
  });

  it('refuses a bad pattern, an unknown time zone and a pattern that never runs', () => {
    for (const [pattern, tz] of [
      ['61 * * * *', 'UTC'],
      ['', 'UTC'],
      ['hello', 'UTC'],
      ['* * * * *', 'Mars/Olympus'],
      ['0 0 30 2 *', 'UTC'],
      [42, 'UTC'],
    ] as const) {
      expect(() => assertCron(pattern, tz)).toThrow(InvalidArgumentError);
    }
    expect(() => assertCron('@daily', 'Asia/Tokyo')).not.toThrow();
  });

  it('advances cron from max(planned, now) and intervals by whole steps from the planned run-at', () => {
    const cron = { cron: '0 * * * *', tz: 'UTC' };
    // Late (now past the planned run-at): the first run after now, not the missed slots.
    expect(iso(nextRunAt(cron, at('2025-01-01T10:00:00Z'), at('2025-01-01T12:10:00Z')))).toBe(
      '2025-01-01T13:00:00.000Z',
    );
    // Early (claimed before its planned run-at, e.g. promoted by hand): after the planned one.
    expect(iso(nextRunAt(cron, at('2025-01-01T10:00:00Z'), at('2025-01-01T09:59:00Z')))).toBe(
      '2025-01-01T11:00:00.000Z',
    );
    const every = { everyMs: 1_000 };
    expect(nextRunAt(every, 10_000, 10_000)).toBe(11_000);
    expect(nextRunAt(every, 10_000, 10_500)).toBe(11_000);
    expect(nextRunAt(every, 10_000, 13_250)).toBe(14_000); // the phase is kept
    expect(nextRunAt(every, 10_000, 9_000)).toBe(11_000);
    expect(nextRunAt(every, null, 5_000)).toBe(6_000);
  });
});
