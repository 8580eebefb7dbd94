import type { Redis } from 'ioredis';
import request from 'supertest';
import { keyDump } from '../../api/support/api';
import { connect, uniqueQueue } from '../../support/redis';
import { login, startDashboardApi, TOKEN, type DashboardApi } from './support/dashboard-api';
import { SseReader } from './support/sse';

const CSRF = { 'X-EMQ-Dashboard': '1' };

describe('dashboard session (EMQ_API_TOKEN set)', () => {
  let api: DashboardApi;
  let redis: Redis;
  let queue: string;
  let jobId: string;

  beforeAll(async () => {
    api = await startDashboardApi({ EMQ_API_TOKEN: TOKEN });
    redis = connect();
    queue = uniqueQueue('session');
    jobId = await api.queues.enqueue(queue, { seed: true });
  });
  afterAll(async () => {
    await api.close();
    await redis.quit();
  });

  const http = () => request(api.url);
  const dump = () => keyDump(redis, `${api.prefix}:*`);

  it('says a token is required, and that a caller without one is not logged in', async () => {
    const res = await http().get('/dashboard/session').expect(200);
    expect(res.body).toEqual({ required: true, authenticated: false });
  });

  it('logs in with the token: an HttpOnly, SameSite=Strict cookie that is not the token', async () => {
    const res = await http().post('/dashboard/session').send({ token: TOKEN }).expect(204);
    const cookies = [res.headers['set-cookie'] ?? []].flat();
    expect(cookies).toHaveLength(1);
    const [pair, ...attributes] = cookies[0].split(';').map((part: string) => part.trim());
    expect(pair).toMatch(/^emq_session=v1\.[0-9a-z]+\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    expect(pair).not.toContain(TOKEN);
    expect(attributes).toEqual(
      expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/', `Max-Age=${8 * 3600}`]),
    );
    // Plain http, no trusted proxy: not Secure (a browser would drop a Secure cookie over http).
    expect(attributes).not.toContain('Secure');
    const state = await http().get('/dashboard/session').set('Cookie', pair).expect(200);
    expect(state.body).toEqual({ required: true, authenticated: true });
  });

  it('refuses a wrong token with the api 401 body and sets no cookie', async () => {
    for (const token of ['wrong', `${TOKEN}x`, TOKEN.slice(0, -1), TOKEN.toUpperCase()]) {
      const res = await http().post('/dashboard/session').send({ token }).expect(401);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.any(String) });
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });

  it.each([
    ['no body', undefined],
    ['no token field', {}],
    ['an empty token', { token: '' }],
    ['a number', { token: 5 }],
    ['an extra field', { token: TOKEN, remember: true }],
  ])('answers a login with %s with a 400 and no cookie', async (_label, body) => {
    const res = await http().post('/dashboard/session').send(body).expect(400);
    expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('lets the cookie through /queues routes, /dashboard/api and the event stream', async () => {
    const cookie = await login(api);
    const view = await http().get(`/queues/${queue}/jobs/${jobId}`).set('Cookie', cookie).expect(200);
    expect(view.body).toMatchObject({ id: jobId, data: { seed: true } });
    const overview = await http().get('/dashboard/api/overview').set('Cookie', cookie).expect(200);
    expect(overview.body.queues.map((q: { queue: string }) => q.queue)).toContain(queue);
    await http().get(`/dashboard/api/queues/${queue}/jobs`).set('Cookie', cookie).expect(200);
    const metrics = await http().get('/metrics').set('Cookie', cookie).expect(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    await http().get('/metrics').expect(401);
    const stream = await SseReader.open(api.url, '/dashboard/api/events', { Cookie: cookie });
    try {
      expect(stream.status).toBe(200);
      expect(stream.header('content-type')).toMatch(/^text\/event-stream/);
      await stream.next('overview');
    } finally {
      stream.close();
    }
  });

  it('refuses the event stream and the data routes without a session (401 JSON)', async () => {
    for (const cookie of [undefined, 'emq_session=v1.abc.def.ghi', 'other=1']) {
      let req = http().get('/dashboard/api/overview');
      if (cookie) req = req.set('Cookie', cookie);
      const res = await req.expect(401);
      expect(res.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.any(String) });
    }
    const stream = await SseReader.open(api.url, '/dashboard/api/events');
    expect(stream.status).toBe(401);
    stream.close();
  });

  it('refuses a cookie-authenticated write without X-EMQ-Dashboard (403 JSON) and writes nothing', async () => {
    const cookie = await login(api);
    const before = await dump();
    const writes: [string, string, object?][] = [
      ['post', `/queues/${queue}/pause`],
      ['post', `/queues/${queue}/jobs`, { data: 1 }],
      ['delete', `/queues/${queue}/jobs/${jobId}`],
      ['post', `/queues/${queue}/drain`, {}],
      ['post', `/queues/${uniqueQueue('fresh')}/jobs`, { data: 1 }],
    ];
    for (const [method, path, body] of writes) {
      for (const header of [undefined, '0', 'true']) {
        const agent = http() as unknown as Record<string, (p: string) => request.Test>;
        let req = agent[method](path).set('Cookie', cookie);
        if (header !== undefined) req = req.set('X-EMQ-Dashboard', header);
        const res = await (body ? req.send(body) : req);
        expect({ path, header, status: res.status }).toEqual({ path, header, status: 403 });
        expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', message: expect.any(String) });
      }
    }
    // The registry, the queue and the fresh queue's keys all share the api's prefix.
    expect(await dump()).toEqual(before);
  });

  it('lets a cookie-authenticated write with X-EMQ-Dashboard: 1 through', async () => {
    const cookie = await login(api);
    await http().post(`/queues/${queue}/pause`).set('Cookie', cookie).set(CSRF).expect(200);
    expect(await api.queues.isPaused(queue)).toBe(true);
    await http().post(`/queues/${queue}/resume`).set('Cookie', cookie).set(CSRF).expect(200);
    expect(await api.queues.isPaused(queue)).toBe(false);
  });

  it('keeps the bearer token working, with no CSRF header needed, and judges a request by its header alone', async () => {
    await http().post(`/queues/${queue}/pause`).set('Authorization', `Bearer ${TOKEN}`).expect(200);
    await http().post(`/queues/${queue}/resume`).set('Authorization', `Bearer ${TOKEN}`).expect(200);
    await http().get('/dashboard/api/overview').set('Authorization', `Bearer ${TOKEN}`).expect(200);
    const cookie = await login(api);
    // A wrong bearer header is not rescued by a good cookie.
    await http().get('/queues').set('Cookie', cookie).set('Authorization', 'Bearer wrong').expect(401);
  });

  it('logs out: the cookie is cleared and the session it held is refused from then on', async () => {
    const cookie = await login(api);
    await http().get('/queues').set('Cookie', cookie).expect(200);
    const res = await http().delete('/dashboard/session').set('Cookie', cookie).expect(204);
    const cleared = [res.headers['set-cookie'] ?? []].flat()[0] ?? '';
    expect(cleared).toMatch(/^emq_session=;/);
    expect(cleared).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect(cleared).toMatch(/HttpOnly/);
    await http().get('/queues').set('Cookie', cookie).expect(401);
    expect((await http().get('/dashboard/session').set('Cookie', cookie)).body.authenticated).toBe(false);
    // Logging out without a session is fine too.
    await http().delete('/dashboard/session').expect(204);
  });

  it('refuses a tampered cookie, and one signed with another token', async () => {
    const cookie = await login(api);
    const [, value] = cookie.split('=');
    const parts = value.split('.');
    const flipped = parts[3][0] === 'A' ? 'B' : 'A';
    const tampered = [parts[0], parts[1], parts[2], flipped + parts[3].slice(1)].join('.');
    await http().get('/queues').set('Cookie', `emq_session=${tampered}`).expect(401);
    const older = [parts[0], (parseInt(parts[1], 36) - 1).toString(36), parts[2], parts[3]].join('.');
    await http().get('/queues').set('Cookie', `emq_session=${older}`).expect(401);
    const other = await startDashboardApi({ EMQ_API_TOKEN: 'another-token' });
    try {
      await request(other.url).get('/queues').set('Cookie', cookie).expect(401);
      // The same token on another api (a second replica): the cookie works there too.
      const replica = await startDashboardApi({ EMQ_API_TOKEN: TOKEN });
      try {
        await request(replica.url).get('/queues').set('Cookie', cookie).expect(200);
      } finally {
        await replica.close();
      }
    } finally {
      await other.close();
    }
  });

  it('accepts the session cookie among others, but not two session cookies at once', async () => {
    const cookie = await login(api);
    await http().get('/queues').set('Cookie', `a=1; ${cookie}; b=2`).expect(200);
    await http().get('/queues').set('Cookie', `${cookie}; ${cookie}`).expect(401);
  });
});

describe('dashboard session without EMQ_API_TOKEN', () => {
  it('needs no login: 204 without a cookie, and every route is open', async () => {
    const api = await startDashboardApi();
    try {
      const state = await request(api.url).get('/dashboard/session').expect(200);
      expect(state.body).toEqual({ required: false, authenticated: true });
      const res = await request(api.url).post('/dashboard/session').send({ token: 'anything' }).expect(204);
      expect(res.headers['set-cookie']).toBeUndefined();
      await request(api.url).get('/dashboard/api/overview').expect(200);
    } finally {
      await api.close();
    }
  });
});

describe('EMQ_DASHBOARD=off', () => {
  it('serves no dashboard route, and the guard takes no session cookie', async () => {
    const on = await startDashboardApi({ EMQ_API_TOKEN: TOKEN });
    const off = await startDashboardApi({ EMQ_API_TOKEN: TOKEN, EMQ_DASHBOARD: 'off' });
    try {
      const cookie = await login(on);
      for (const path of ['/dashboard', '/dashboard/session', '/dashboard/api/overview']) {
        const res = await request(off.url).get(path).set('Authorization', `Bearer ${TOKEN}`).expect(404);
        expect(res.body).toMatchObject({ statusCode: 404 });
      }
      await request(off.url).get('/queues').set('Cookie', cookie).expect(401);
      await request(off.url).get('/queues').set('Authorization', `Bearer ${TOKEN}`).expect(200);
    } finally {
      await Promise.all([on.close(), off.close()]);
    }
  });

  it('refuses a value other than on or off at boot, naming the variable', async () => {
    await expect(startDashboardApi({ EMQ_DASHBOARD: 'maybe' })).rejects.toThrow(/EMQ_DASHBOARD/);
  });
});
