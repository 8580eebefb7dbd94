import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { QueueService, type Job } from '@app/echomq';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { RedisServer } from '../support/redis-server';
import { processorClass, waitUntil } from '../worker/fixtures/support';
import { aclArguments, documentedOptionalRights, refusalsOf, urlAs } from './support/acl';

const tag = randomBytes(4).toString('hex');

/**
 * The bare lines leave out what only an optional feature or check needs; the ACL tests accept
 * those refusals (CARRIED_ON_WITHOUT). Here the documented addition is granted, and then
 * nothing at all may be refused.
 */
describe('the optional additions of docs/upgrading.md', () => {
  it('lists each as a single right', () => {
    const optional = documentedOptionalRights();
    expect(optional).toEqual(expect.arrayContaining(['+config|get', '+wait', '+client|setinfo']));
    for (const right of optional) expect(right).toMatch(/^\+[a-z]+(\|[a-z-]+)?$/);
  });

  it('with +config|get, a producer boots, enqueues and closes with nothing refused', async () => {
    const admin = connect();
    const user = `emq-config-${tag}`;
    const password = randomBytes(12).toString('hex');
    const prefix = `acl-config-${tag}`;
    await admin.call(
      'ACL',
      'SETUSER',
      ...aclArguments('emq-worker', user, password, prefix, { extra: ['+config|get'] }),
    );
    try {
      const app = await bootApp([], { connection: { url: urlAs(user, password) }, keyPrefix: prefix });
      try {
        const queues = app.get(QueueService);
        const queue = uniqueQueue('acl-config');
        const id = await queues.enqueue(queue, 'x');
        expect((await queues.getJob(queue, id))?.state).toBe('pending');
      } finally {
        await app.close();
      }
      expect(await refusalsOf(admin, user)).toEqual([]);
    } finally {
      await admin.call('ACL', 'DELUSER', user);
      await admin.quit();
    }
  });

  it('with +wait (and +config|get), a durable worker runs a job with nothing refused', async () => {
    // A master of its own with one replica: ACL rules are not replicated, and the clients talk
    // to the master only, so the user is created there.
    // (a full sync starts at once: by default a diskless one waits 5 s for more replicas)
    const master = await RedisServer.start({ args: ['--repl-diskless-sync-delay', '0'] });
    const replica = await RedisServer.start({ args: ['--replicaof', '127.0.0.1', String(master.port)] });
    const admin = new Redis(master.url);
    const onReplica = new Redis(replica.url);
    const user = `emq-durable-${tag}`;
    const password = randomBytes(12).toString('hex');
    try {
      await waitUntil(
        async () => /master_link_status:up/.test(await onReplica.info('replication')),
        'the replica linked to its master',
      );
      await admin.call(
        'ACL',
        'SETUSER',
        ...aclArguments('emq-worker', user, password, 'emq', { extra: ['+wait', '+config|get'] }),
      );
      const queue = uniqueQueue('acl-durable');
      const Worker = processorClass(queue, {}, (job: Job<string>) => job.data.toUpperCase());
      const app = await bootApp([Worker], {
        connection: { url: urlAs(user, password, master.url) },
        durable: { replicas: 1, timeoutMs: 2_000 },
      });
      try {
        const queues = app.get(QueueService);
        const id = await queues.enqueue(queue, 'replicated');
        await expect(queues.waitFor(queue, id, 10_000)).resolves.toBe('REPLICATED');
      } finally {
        await app.close();
      }
      expect(await admin.info('commandstats')).toMatch(/^cmdstat_wait:calls=[1-9]/m);
      expect(await refusalsOf(admin, user)).toEqual([]);
    } finally {
      admin.disconnect();
      onReplica.disconnect();
      await replica.destroy();
      await master.destroy();
    }
  });
});
