import type { Redis } from 'ioredis';
import request from 'supertest';
import { keyDump } from '../../api/support/api';
import { connect, uniqueQueue } from '../../support/redis';
import { login, startDashboardApi, TOKEN, type DashboardApi } from './support/dashboard-api';

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
/** What a browser adds to a form post or fetch that another site's page makes. */
const FOREIGN: [string, Record<string, string>][] = [
  ['Origin of another site', { Origin: 'https://evil.example' }],
  ['Origin of another port', { Origin: 'http://127.0.0.1:1' }],
  ['Origin null (sandboxed or opaque)', { Origin: 'null' }],
  ['Sec-Fetch-Site cross-site', { 'Sec-Fetch-Site': 'cross-site' }],
  ['Sec-Fetch-Site same-site', { 'Sec-Fetch-Site': 'same-site' }],
  ['both', { Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' }],
];

describe('writes sent by another site’s page', () => {
  let open: DashboardApi;
  let redis: Redis;
  let queue: string;

  beforeAll(async () => {
    open = await startDashboardApi();
    redis = connect();
    queue = uniqueQueue('csrf');
    await open.queues.enqueueMany(queue, [{ data: 1 }]);
  });
  afterAll(async () => {
    await open.close();
    await redis.quit();
  });

  /** The api's keys, but for its node-id lease (taken and renewed by the process itself, whatever requests do). */
  const dump = async (api: DashboardApi) => {
    const keys = await keyDump(redis, `${api.prefix}:*`);
    for (const key of keys.keys()) if (key.startsWith(`${api.prefix}:node:`)) keys.delete(key);
    return keys;
  };
  /** The writes a plain HTML form can make (no preflight): none needs a JSON body. */
  const writes = (): [string, string][] => [
    ['post', `/queues/${queue}/pause`],
    ['post', `/queues/${queue}/drain`],
    ['post', `/queues/${queue}/dead/retry`],
    ['post', `/queues/${queue}/obliterate?force=true`],
    ['post', `/queues/${queue}/jobs`],
  ];
  const send = (api: DashboardApi, method: string, path: string, headers: Record<string, string>) => {
    const agent = request(api.url) as unknown as Record<string, (p: string) => request.Test>;
    return agent[method](path).set(headers).send('a=b');
  };

  it.each(FOREIGN)(
    'refuses them on an api without a token (%s): 403 JSON, nothing written',
    async (_l, headers) => {
      const before = await dump(open);
      for (const [method, path] of writes()) {
        const res = await send(open, method, path, { ...FORM, ...headers });
        expect({ path, status: res.status }).toEqual({ path, status: 403 });
        expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', message: expect.any(String) });
      }
      expect(await dump(open)).toEqual(before);
    },
  );

  it('lets a client that sends neither header write (curl, SDKs), and a same-origin page', async () => {
    await request(open.url).post(`/queues/${queue}/pause`).expect(200);
    const self = new URL(open.url);
    await request(open.url)
      .post(`/queues/${queue}/resume`)
      .set({ Origin: self.origin, 'Sec-Fetch-Site': 'same-origin' })
      .expect(200);
    expect(await open.queues.isPaused(queue)).toBe(false);
  });

  it('lets reads through whatever their origin', async () => {
    await request(open.url).get(`/queues/${queue}`).set(FOREIGN[5][1]).expect(200);
  });

  it('refuses them with a token too: on the session cookie with its header, and on the login', async () => {
    const api = await startDashboardApi({ EMQ_API_TOKEN: TOKEN });
    try {
      const cookie = await login(api);
      const before = await dump(api);
      const foreign = { Cookie: cookie, 'X-EMQ-Dashboard': '1', Origin: 'https://evil.example' };
      await request(api.url).post(`/queues/${queue}/pause`).set(foreign).expect(403);
      await request(api.url)
        .post('/dashboard/session')
        .set({ 'Sec-Fetch-Site': 'cross-site' })
        .send({ token: TOKEN })
        .expect(403);
      expect(await dump(api)).toEqual(before);
      // The bearer token is judged by itself: no page can send it cross-site without a preflight.
      await request(api.url)
        .post(`/queues/${queue}/pause`)
        .set({ Authorization: `Bearer ${TOKEN}`, Origin: 'https://evil.example' })
        .expect(200);
      await request(api.url)
        .post(`/queues/${queue}/resume`)
        .set('Authorization', `Bearer ${TOKEN}`)
        .expect(200);
    } finally {
      await api.close();
    }
  });

  it('compares Origin with X-Forwarded-Host only behind a trusted proxy', async () => {
    const proxied = await startDashboardApi({ EMQ_TRUST_PROXY: '1' });
    try {
      const through = { Origin: 'https://ops.example', 'X-Forwarded-Host': 'ops.example' };
      await request(proxied.url).post(`/queues/${queue}/pause`).set(through).expect(200);
      await request(proxied.url).post(`/queues/${queue}/resume`).set(through).expect(200);
      // Not trusted: the Host header (127.0.0.1:<port>) is the one compared.
      await request(open.url).post(`/queues/${queue}/pause`).set(through).expect(403);
      expect(await open.queues.isPaused(queue)).toBe(false);
    } finally {
      await proxied.close();
    }
  });
});
