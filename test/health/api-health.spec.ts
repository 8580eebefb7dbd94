import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { createApiApp } from '../../apps/api/src/create-app';
import { redisUrl } from '../support/redis';

describe("the api's public /health", () => {
  let app: NestExpressApplication | undefined;

  afterEach(async () => {
    await app?.close();
  });

  it('says Redis is reachable without naming its address (named only when it is not)', async () => {
    app = await createApiApp({ env: { REDIS_URL: redisUrl() }, logger: ['error'] });
    await app.listen(0, '127.0.0.1');
    const up = await request(await app.getUrl())
      .get('/health')
      .expect(200);
    expect(up.body).toMatchObject({
      status: 'ok',
      info: { redis: { status: 'up', redis: { reachable: true } } },
    });
    const { hostname, port } = new URL(redisUrl());
    expect(JSON.stringify(up.body)).not.toContain(port);
    expect(JSON.stringify(up.body)).not.toContain(hostname);
  });
});
