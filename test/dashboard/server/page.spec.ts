import request from 'supertest';
import { cacheControlFor } from '../../../apps/api/src/dashboard/page.controller';
import { dashboardAsset } from '../../../apps/api/src/dashboard/page/dashboard-assets';
import { startDashboardApi, TOKEN, type DashboardApi } from './support/dashboard-api';

describe('dashboard page and assets', () => {
  let api: DashboardApi;

  beforeAll(async () => {
    api = await startDashboardApi({ EMQ_API_TOKEN: TOKEN });
  });
  afterAll(async () => {
    await api.close();
  });

  it.each(['/dashboard', '/dashboard/'])(
    'serves the index at %s without a token, revalidated each load',
    async (path) => {
      const res = await request(api.url).get(path).expect(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.text).toBe(String(dashboardAsset('index.html')?.body));
      // The api's CSP stays on: scripts and styles from the api itself only.
      expect(res.headers['content-security-policy']).toMatch(/script-src 'self'/);
    },
  );

  it('serves the files the index loads, by name', async () => {
    const index = String(dashboardAsset('index.html')?.body);
    const names = [...index.matchAll(/\/dashboard\/assets\/([A-Za-z0-9._-]+)/g)].map((m) => m[1]);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const res = await request(api.url).get(`/dashboard/assets/${name}`).expect(200);
      expect(res.headers['content-type']).toBe(dashboardAsset(name)?.contentType);
      expect(res.headers['cache-control']).toBe(cacheControlFor(name));
    }
  });

  it.each(['nope.js', '..%2Fpackage.json', '%2E%2E%2F%2E%2E%2Fpackage.json', 'index.html%00.js'])(
    'answers an unknown asset name (%s) with a 404 JSON body',
    async (name) => {
      const res = await request(api.url).get(`/dashboard/assets/${name}`).expect(404);
      expect(res.body).toMatchObject({ statusCode: 404, error: 'Not Found' });
    },
  );

  it('caches only names that carry a content hash for good', () => {
    expect(cacheControlFor('app.3f2a9c1b.js')).toBe('public, max-age=31536000, immutable');
    expect(cacheControlFor('app-0123456789abcdef.css')).toBe('public, max-age=31536000, immutable');
    expect(cacheControlFor('app.js')).toBe('no-cache');
    expect(cacheControlFor('index.html')).toBe('no-cache');
  });

  it('keeps the dashboard routes out of the OpenAPI document', async () => {
    const doc = await request(api.url).get('/docs-json').expect(200);
    expect(Object.keys(doc.body.paths).filter((path) => path.startsWith('/dashboard'))).toEqual([]);
  });
});
