import type { ApiConfig } from '../../../apps/api/src/config/api-config';
import { DashboardSessions } from '../../../apps/api/src/auth/dashboard-sessions';

/** The session rules on a given clock (the HTTP specs cannot wait out a ttl of a minute or more). */
describe('dashboard sessions', () => {
  const config = (apiToken: string | undefined, ttlMs = 60_000) =>
    ({ apiToken, dashboardSessionTtlMs: ttlMs }) as ApiConfig;
  const t0 = Date.UTC(2030, 0, 1);

  it('lasts the ttl from its login, then is refused', () => {
    const sessions = new DashboardSessions(config('token'));
    const value = sessions.issue(t0);
    expect(sessions.verify(value, t0)).toBe(true);
    expect(sessions.verify(value, t0 + 59_999)).toBe(true);
    expect(sessions.verify(value, t0 + 60_000)).toBe(false);
  });

  it('follows the ttl in force: a shorter one ends live sessions sooner', () => {
    const long = new DashboardSessions(config('token', 3_600_000));
    const value = long.issue(t0);
    const short = new DashboardSessions(config('token', 60_000));
    expect(long.verify(value, t0 + 120_000)).toBe(true);
    expect(short.verify(value, t0 + 120_000)).toBe(false);
  });

  it('refuses a session issued further ahead than the tolerated clock skew', () => {
    const sessions = new DashboardSessions(config('token'));
    expect(sessions.verify(sessions.issue(t0 + 60_000), t0)).toBe(true);
    expect(sessions.verify(sessions.issue(t0 + 60_001), t0)).toBe(false);
  });

  it('forgets a logged-out session, and only that one', () => {
    const sessions = new DashboardSessions(config('token'));
    const a = sessions.issue(t0);
    const b = sessions.issue(t0);
    expect(a).not.toBe(b);
    sessions.revoke(a, t0);
    expect(sessions.verify(a, t0)).toBe(false);
    expect(sessions.verify(b, t0)).toBe(true);
  });

  it('keeps at most 10,000 logouts, dropping the oldest first and the expired at once', () => {
    const sessions = new DashboardSessions(config('token'));
    const first = sessions.issue(t0);
    sessions.revoke(first, t0);
    for (let i = 0; i < 10_000; i++) sessions.revoke(sessions.issue(t0), t0);
    // The first logout was forgotten to make room: its cookie (long dropped by its browser) reads live again.
    expect(sessions.verify(first, t0)).toBe(true);
    const revoked = (sessions as unknown as { revoked: Map<string, number> }).revoked;
    expect(revoked.size).toBe(10_000);
    // Past their expiry, the remembered logouts are pruned at the next one.
    sessions.revoke(sessions.issue(t0 + 60_000), t0 + 60_000);
    expect(revoked.size).toBe(1);
  });

  it('has no sessions without a token', () => {
    const sessions = new DashboardSessions(config(undefined));
    expect(sessions.required).toBe(false);
    expect(sessions.verify('v1.abc.def.ghi', t0)).toBe(false);
    expect(() => sessions.issue(t0)).toThrow(/EMQ_API_TOKEN/);
  });
});
