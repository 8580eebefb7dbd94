import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import request from 'supertest';
import { startApi, type RunningApi } from '../api/support/api';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { aclArguments, refusalsOf, unexpectedRefusalsOf, urlAs } from './support/acl';
import { aborted, started, TourProcessor, WORKED_QUEUE } from './support/acl-processor';
import { tourIdleQueue, tourWorkedQueue } from './support/api-tour';

const tag = randomBytes(4).toString('hex');
const PREFIX = `acl-api-${tag}`;

/**
 * The api booted as main boots it, logged in as a user with exactly the documented api line,
 * beside a worker logged in with exactly the documented worker line, both on one prefix.
 */
describe('the api under the documented api ACL line', () => {
  const apiUser = `emq-api-${tag}`;
  const workerUser = `emq-worker-${tag}`;
  const apiPassword = randomBytes(12).toString('hex');
  const workerPassword = randomBytes(12).toString('hex');
  let admin: Redis;
  let api: RunningApi;
  let worker: INestApplication;

  beforeAll(async () => {
    admin = connect();
    await admin.call('ACL', 'SETUSER', ...aclArguments('emq-api', apiUser, apiPassword, PREFIX));
    await admin.call('ACL', 'SETUSER', ...aclArguments('emq-worker', workerUser, workerPassword, PREFIX));
    worker = await bootApp([TourProcessor], {
      connection: { url: urlAs(workerUser, workerPassword) },
      keyPrefix: PREFIX,
    });
    // No EMQ_NODE_ID: the api leases its node number under the prefix, with its own rights.
    api = await startApi({ REDIS_URL: urlAs(apiUser, apiPassword), EMQ_KEY_PREFIX: PREFIX });
  });

  afterAll(async () => {
    started.resolveAll();
    aborted.resolveAll();
    await api?.close();
    await worker?.close();
    await admin.call('ACL', 'DELUSER', apiUser, workerUser);
    await admin.quit();
  });

  const http = () => request(api.url);

  it('answers every route family with 2xx, and Redis refuses neither user anything', async () => {
    await tourWorkedQueue(http);
    await tourIdleQueue(http, uniqueQueue('acl-idle'));
    // Shutdown too: the node leases are given back and the connections quit under the same rights.
    await api.close();
    await worker.close();
    expect(await unexpectedRefusalsOf(admin, apiUser)).toEqual([]);
    expect(await unexpectedRefusalsOf(admin, workerUser)).toEqual([]);
  });

  it('cannot reach keys outside its prefix, nor the server settings', async () => {
    const direct = new Redis(urlAs(apiUser, apiPassword));
    try {
      await expect(direct.smembers('emq:queues')).rejects.toThrow(/NOPERM/);
      await expect(direct.get(`other-${tag}:{${WORKED_QUEUE}}:format`)).rejects.toThrow(/NOPERM/);
      await expect(direct.call('CONFIG', 'SET', 'maxmemory-policy', 'allkeys-lru')).rejects.toThrow(/NOPERM/);
      await expect(direct.call('FLUSHALL')).rejects.toThrow(/NOPERM/);
      await expect(direct.call('KEYS', '*')).rejects.toThrow(/NOPERM/);
      expect(await direct.get(`${PREFIX}:{${WORKED_QUEUE}}:format`)).toBe('1');
    } finally {
      direct.disconnect();
    }
    const refused = await refusalsOf(admin, apiUser);
    expect(refused.map((entry) => entry.object)).toEqual(
      expect.arrayContaining(['emq:queues', `other-${tag}:{${WORKED_QUEUE}}:format`, 'flushall', 'keys']),
    );
  });
});
