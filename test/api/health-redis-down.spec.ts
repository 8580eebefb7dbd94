import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { createApiApp } from '../../apps/api/src/create-app';
import { CapturedLog } from '../support/captured-log';
import { uniqueQueue } from '../support/redis';
import { freePort, RedisServer } from '../support/redis-server';

describe('api: booted while its Redis is down', () => {
  let app: NestExpressApplication | undefined;
  let server: RedisServer | undefined;

  afterEach(async () => {
    await app?.close();
    await server?.destroy();
  });

  it('reports down at once, refuses enqueue with 503, and is healthy once Redis starts', async () => {
    const port = await freePort();
    const target = `127.0.0.1:${port}`;
    const log = new CapturedLog();
    app = await createApiApp({ env: { REDIS_URL: `redis://${target}` }, logger: log });
    await app.listen(0, '127.0.0.1');
    const url = await app.getUrl();
    const queue = uniqueQueue('api-down');
    await log.waitFor(
      (line) => line.level === 'warn' && line.message.includes(`cannot reach Redis at ${target}`),
    );

    const down = await request(url).get('/health').expect(503);
    expect(down.body).toMatchObject({
      status: 'error',
      error: {
        redis: { status: 'down', message: expect.stringContaining(`Redis at ${target} is unreachable`) },
      },
    });
    const refused = await request(url).post(`/queues/${queue}/jobs`).send({ data: 1 }).expect(503);
    expect(refused.body).toMatchObject({ code: 'REDIS_UNAVAILABLE' });

    server = await RedisServer.start({ port });
    await log.waitFor((line) => line.level === 'log' && line.message.includes(`reached Redis at ${target}`));

    const up = await request(url).get('/health').expect(200);
    expect(up.body).toMatchObject({ status: 'ok', info: { redis: { status: 'up' } } });
    await request(url).post(`/queues/${queue}/jobs`).send({ data: 2 }).expect(201);
  });
});
