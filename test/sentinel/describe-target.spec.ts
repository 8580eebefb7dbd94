import { RedisConnections } from '@app/echomq/internal';
import { describeSentinels, describeTarget } from '@app/echomq/connection/describe-target';

/**
 * A Sentinel connection is named in logs and errors by the master's name and the sentinels
 * asked (the master's address changes with every failover), never with a password.
 */
describe('the description of a Sentinel connection', () => {
  const sentinels = [
    { host: '10.0.0.1', port: 26379 },
    { host: '10.0.0.2', port: 26380 },
  ];

  it('names the master and its sentinels', () => {
    expect(describeTarget(undefined, { sentinels, name: 'jobs' })).toBe(
      'master jobs via sentinels 10.0.0.1:26379, 10.0.0.2:26380',
    );
  });

  it('never includes a password, the master’s or the sentinels’', () => {
    const text = describeTarget(undefined, {
      sentinels,
      name: 'jobs',
      password: 's3cret-master',
      sentinelPassword: 's3cret-sentinel',
      username: 'app',
      sentinelUsername: 'watcher',
    });
    expect(text).not.toMatch(/s3cret|app|watcher/);
  });

  it('cuts a long list of sentinels, keeping the count of the rest', () => {
    const many = Array.from({ length: 5 }, (_, i) => ({ host: `s${i}`, port: 26379 }));
    expect(describeSentinels('jobs', many)).toBe(
      'master jobs via sentinels s0:26379, s1:26379, s2:26379 and 2 more',
    );
  });

  it('fills the defaults ioredis applies (localhost, 26379)', () => {
    expect(describeSentinels('jobs', [{}])).toBe('master jobs via sentinels localhost:26379');
  });

  it('is what the command connection reports as its target', async () => {
    const connections = new RedisConnections({
      connection: {
        sentinels: [{ host: '127.0.0.1', port: 1 }],
        name: 'nowhere',
        password: 'pw-1',
        lazyConnect: true,
      },
    });
    try {
      expect(connections.reachability.target).toBe('master nowhere via sentinels 127.0.0.1:1');
      expect((connections.client as unknown as { target: string }).target).toBe(
        'master nowhere via sentinels 127.0.0.1:1',
      );
    } finally {
      await connections.onApplicationShutdown();
    }
  });
});
