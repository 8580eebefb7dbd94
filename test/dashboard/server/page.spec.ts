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

  it('serves the index at /dashboard/ without a token, revalidated each load', async () => {
    const res = await request(api.url).get('/dashboard/').expect(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.text).toBe(String(dashboardAsset('index.html')?.body));
    // The api's CSP stays on: scripts and styles from the api itself only.
    expect(res.headers['content-security-policy']).toMatch(/script-src 'self'/);
  });

  it.each([
    ['/dashboard', 'dashboard/'],
    ['/dashboard?x=1', 'dashboard/?x=1'],
  ])('sends %s to the index by a relative redirect (a proxy path prefix stays)', async (path, location) => {
    const res = await request(api.url).get(path).expect(302);
    expect(res.headers.location).toBe(location);
    // Resolved as a browser does, behind a proxy that serves the api under /emq/.
    expect(new URL(location, `https://ops.example/emq${path}`).pathname).toBe('/emq/dashboard/');
  });

  it('names its files and the api relative to /dashboard/, never from the host root', () => {
    const index = String(dashboardAsset('index.html')?.body);
    expect(index).not.toMatch(/(?:href|src)="\//);
    for (const name of ['app.js', 'live.js', 'http.js']) {
      expect(String(dashboardAsset(name)?.body)).not.toMatch(/fetch\((?:'|`)\/|new EventSource\((?:'|`)\//);
    }
  });

  it('serves the files the index loads, by name', async () => {
    const index = String(dashboardAsset('index.html')?.body);
    const names = [...index.matchAll(/"assets\/([A-Za-z0-9._-]+)"/g)].map((m) => m[1]);
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
    expect(cacheControlFor('app.0123456789abcdef.css')).toBe('public, max-age=31536000, immutable');
    // Names that only look hashed (a word of hex digits) are revalidated.
    expect(cacheControlFor('add-deadbeef.js')).toBe('no-cache');
    expect(cacheControlFor('badge-cafe1234.css')).toBe('no-cache');
    expect(cacheControlFor('app.js')).toBe('no-cache');
    expect(cacheControlFor('index.html')).toBe('no-cache');
  });

  it('keeps the dashboard routes out of the OpenAPI document', async () => {
    const doc = await request(api.url).get('/docs-json').expect(200);
    expect(Object.keys(doc.body.paths).filter((path) => path.startsWith('/dashboard'))).toEqual([]);
  });
});
