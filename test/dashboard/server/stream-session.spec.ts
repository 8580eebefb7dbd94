import request from 'supertest';
import { DashboardSessions } from '../../../apps/api/src/auth/dashboard-sessions';
import { login, startDashboardApi, TOKEN, until, type DashboardApi } from './support/dashboard-api';
import { SseReader } from './support/sse';

interface OverviewMessage {
  seq: number;
}

/** A stream opened on a dashboard session is checked at each burst and ends with the session. */
describe('a dashboard event stream and its session', () => {
  let api: DashboardApi;

  beforeAll(async () => {
    api = await startDashboardApi({ EMQ_API_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await api.close();
  });

  const stream = (cookie: string) => SseReader.open(api.url, '/dashboard/api/events', { Cookie: cookie });

  it('ends the stream of a session that logs out, and only that one; the reconnect is refused', async () => {
    const [mine, theirs] = [await login(api), await login(api)];
    const [doomed, kept] = [await stream(mine), await stream(theirs)];
    const bearer = await SseReader.open(api.url, '/dashboard/api/events', {
      Authorization: `Bearer ${TOKEN}`,
    });
    try {
      await Promise.all([doomed.next('overview'), kept.next('overview'), bearer.next('overview')]);
      await request(api.url).delete('/dashboard/session').set('Cookie', mine).expect(204);
      await until('the logged-out stream to end', () => (doomed.closed ? true : undefined));
      // The others go on: each still gets overviews sampled after the logout.
      const seq = Math.max(...kept.data<OverviewMessage>('overview').map((o) => o.seq));
      await kept.next<OverviewMessage>('overview', (o) => o.seq > seq + 1);
      await bearer.next<OverviewMessage>('overview', (o) => o.seq > seq + 1);
      expect([kept.closed, bearer.closed]).toEqual([false, false]);
      const again = await stream(mine);
      expect(again.status).toBe(401);
      again.close();
    } finally {
      for (const open of [doomed, kept, bearer]) open.close();
    }
    await until('every page to close', () => (api.hub.pageCount === 0 ? true : undefined));
  });

  it('ends the stream when its session expires', async () => {
    const sessions = api.app.get(DashboardSessions);
    // Issued so that it ends 3 s from now (a ttl is at least a minute: the login cannot make one).
    const value = sessions.issue(Date.now() - sessions.ttlMs + 3_000);
    const expiring = await stream(`emq_session=${value}`);
    try {
      expect(expiring.status).toBe(200);
      await expiring.next('overview');
      await until('the stream to end at the expiry', () => (expiring.closed ? true : undefined), 15_000);
      expect(sessions.verify(value)).toBe(false);
    } finally {
      expiring.close();
    }
    await until('every page to close', () => (api.hub.pageCount === 0 ? true : undefined));
  });
});
