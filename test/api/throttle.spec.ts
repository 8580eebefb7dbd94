import request from 'supertest';
import { startApi, type RunningApi } from './support/api';

describe('api: request throttling', () => {
  let api: RunningApi;

  beforeAll(async () => {
    // A tiny limit, on this app only: the other suites run with the generous default.
    api = await startApi({ EMQ_THROTTLE_LIMIT: '3', EMQ_THROTTLE_TTL_MS: '60000' });
  });
  afterAll(async () => {
    await api.close();
  });

  it('answers 429 with a JSON body once a client passes the limit, and never throttles /health', async () => {
    for (let n = 0; n < 3; n++) await request(api.url).get('/queues').expect(200);
    const res = await request(api.url).get('/queues').expect(429);
    expect(res.body).toEqual({ statusCode: 429, error: 'Too Many Requests', message: expect.any(String) });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);

    for (let n = 0; n < 5; n++) await request(api.url).get('/health').expect(200);
  });
});
