import request from 'supertest';
import { startDashboardApi, TOKEN } from './support/dashboard-api';

describe('dashboard session behind a trusted proxy', () => {
  it('names the cookie __Host-emq_session over https (Secure, Path=/, no Domain), and reads only that name there', async () => {
    const api = await startDashboardApi({ EMQ_API_TOKEN: TOKEN, EMQ_TRUST_PROXY: '1' });
    const https = { 'X-Forwarded-Proto': 'https' };
    try {
      const res = await request(api.url)
        .post('/dashboard/session')
        .set(https)
        .send({ token: TOKEN })
        .expect(204);
      const cookie = [res.headers['set-cookie']].flat()[0] ?? '';
      expect(cookie).toMatch(/^__Host-emq_session=v1\./);
      expect(cookie).toMatch(/; Secure/);
      expect(cookie).toMatch(/; Path=\//);
      expect(cookie).not.toMatch(/Domain=/i);
      const value = cookie.split(';')[0].split('=')[1];
      await request(api.url)
        .get('/queues')
        .set(https)
        .set('Cookie', `__Host-emq_session=${value}`)
        .expect(200);
      // The plain name (which any service on the host could set) is not read over https, nor this one over http.
      await request(api.url).get('/queues').set(https).set('Cookie', `emq_session=${value}`).expect(401);
      await request(api.url).get('/queues').set('Cookie', `__Host-emq_session=${value}`).expect(401);
      const out = await request(api.url)
        .delete('/dashboard/session')
        .set(https)
        .set('Cookie', `__Host-emq_session=${value}`)
        .expect(204);
      expect([out.headers['set-cookie']].flat()[0]).toMatch(/^__Host-emq_session=;/);
    } finally {
      await api.close();
    }
  });
});
