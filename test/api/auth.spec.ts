import { QUEUE_REGISTRY_KEY } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { bearerToken, tokensMatch } from '../../apps/api/src/auth/token-match';
import { connect, uniqueQueue } from '../support/redis';
import { keyDump, queuePattern, startApi, type RunningApi } from './support/api';

const TOKEN = 'emq-test_token.0123456789~abcdef';

describe('api: bearer token (EMQ_API_TOKEN set)', () => {
  let api: RunningApi;
  let redis: Redis;
  let queue: string;
  let jobId: string;

  beforeAll(async () => {
    api = await startApi({ EMQ_API_TOKEN: TOKEN });
    redis = connect();
    queue = uniqueQueue('auth');
    const res = await request(api.url)
      .post(`/queues/${queue}/jobs`)
      .set('Authorization', `Bearer ${TOKEN}`)
      .send({ data: 'seed' })
      .expect(201);
    jobId = res.body.id;
  });
  afterAll(async () => {
    await api.close();
    await redis.quit();
  });

  /** Every /queues route, as [method, path, body?]; the writes among them would change Redis if let through. */
  const routes = (q: string, id: string): [string, string, object?][] => [
    ['get', '/queues'],
    ['get', `/queues/${q}`],
    ['post', `/queues/${q}/pause`],
    ['post', `/queues/${q}/resume`],
    ['post', `/queues/${q}/jobs`, { data: 1 }],
    ['post', `/queues/${q}/jobs/bulk`, { jobs: [{ data: 1 }] }],
    ['get', `/queues/${q}/jobs`],
    ['get', `/queues/${q}/jobs/${id}`],
    ['post', `/queues/${q}/jobs/${id}/retry`],
    ['delete', `/queues/${q}/jobs/${id}`],
  ];

  const call = (method: string, path: string, body?: object, authorization?: string) => {
    let req = (request(api.url) as unknown as Record<string, (path: string) => request.Test>)[method](path);
    if (authorization !== undefined) req = req.set('Authorization', authorization);
    return body ? req.send(body) : req;
  };

  const wrongCredentials: (string | undefined)[] = [
    undefined,
    '',
    'Bearer',
    'Bearer ',
    'Bearer wrong',
    `Bearer ${TOKEN}x`,
    `Bearer ${TOKEN.slice(0, -1)}`,
    `Bearer ${TOKEN.toUpperCase()}`,
    `Bearer  ${TOKEN} extra`,
    TOKEN,
    `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}`,
    `Token ${TOKEN}`,
  ];

  it('answers 401 (JSON, WWW-Authenticate) to every /queues route without the right token, and writes nothing', async () => {
    const fresh = uniqueQueue('auth-fresh');
    const before = await keyDump(redis, queuePattern(queue));
    for (const authorization of wrongCredentials) {
      for (const [method, path, body] of [...routes(queue, jobId), ...routes(fresh, jobId)]) {
        const res = await call(method, path, body, authorization);
        const label = `${method} ${path} with ${JSON.stringify(authorization)}`;
        expect({ label, status: res.status }).toEqual({ label, status: 401 });
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
        expect(res.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.any(String) });
      }
    }
    expect(await keyDump(redis, queuePattern(queue))).toEqual(before);
    expect(await keyDump(redis, queuePattern(fresh))).toEqual(new Map());
    expect(await redis.sismember(QUEUE_REGISTRY_KEY, fresh)).toBe(0);
  });

  it('rejects before validation: a bad request without a token is a 401, not a 400', async () => {
    await call('get', '/queues/not a queue!/jobs/nope').expect(401);
    await call('post', `/queues/${queue}/jobs`, { nope: true }).expect(401);
  });

  it('lets the right token through (the scheme is case-insensitive)', async () => {
    const view = await call('get', `/queues/${queue}/jobs/${jobId}`, undefined, `Bearer ${TOKEN}`).expect(
      200,
    );
    expect(view.body).toMatchObject({ id: jobId, data: 'seed', state: 'pending' });
    await call('get', '/queues', undefined, `bearer ${TOKEN}`).expect(200);
    const created = await call('post', `/queues/${queue}/jobs`, { data: 2 }, `Bearer ${TOKEN}`).expect(201);
    await call('delete', `/queues/${queue}/jobs/${created.body.id}`, undefined, `Bearer ${TOKEN}`).expect(
      204,
    );
  });

  it('keeps /health and the docs open', async () => {
    await request(api.url).get('/health').expect(200);
    await request(api.url).get('/docs').expect(200);
    const doc = await request(api.url).get('/docs-json').expect(200);
    expect(doc.body.paths['/queues'].get.security).toEqual([{ bearer: [] }]);
    expect(doc.body.paths['/health'].get.security).toBeUndefined();
  });
});

describe('api: without EMQ_API_TOKEN', () => {
  it('serves /queues routes to anyone', async () => {
    const api = await startApi();
    try {
      await request(api.url).get('/queues').expect(200);
    } finally {
      await api.close();
    }
  });
});

describe('token matching', () => {
  it('compares tokens exactly, whatever their lengths', () => {
    expect(tokensMatch(TOKEN, TOKEN)).toBe(true);
    expect(tokensMatch(`${TOKEN}x`, TOKEN)).toBe(false);
    expect(tokensMatch('', TOKEN)).toBe(false);
    expect(tokensMatch(TOKEN.slice(0, -1) + 'g', TOKEN)).toBe(false);
  });

  it('reads only a well-formed Bearer header', () => {
    expect(bearerToken(`Bearer ${TOKEN}`)).toBe(TOKEN);
    expect(bearerToken(`bEaReR ${TOKEN}`)).toBe(TOKEN);
    expect(bearerToken(undefined)).toBeUndefined();
    expect(bearerToken(['Bearer a', 'Bearer b'])).toBeUndefined();
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerToken('Basic abc')).toBeUndefined();
  });
});
