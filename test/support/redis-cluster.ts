import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './redis-server';

/**
 * A real Redis Cluster of throwaway redis-server processes on loopback (three masters,
 * no replicas, no persistence), created with `redis-cli --cluster create`.
 */
export class RedisCluster {
  private constructor(
    readonly ports: readonly number[],
    private readonly children: readonly ChildProcess[],
    private readonly dir: string,
  ) {}

  get nodes(): { host: string; port: number }[] {
    return this.ports.map((port) => ({ host: '127.0.0.1', port }));
  }

  static async start(masters = 3): Promise<RedisCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'echomq-cluster-'));
    const ports: number[] = [];
    for (let i = 0; i < masters; i++) ports.push(await freePort());
    const children = ports.map((port) =>
      spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'no',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--dir',
          dir,
        ],
        { stdio: 'ignore' },
      ),
    );
    const cluster = new RedisCluster(ports, children, dir);
    try {
      for (const port of ports) await cluster.waitFor(port, async (redis) => (await redis.ping()) === 'PONG');
      const created = spawnSync(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...ports.map((port) => `127.0.0.1:${port}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ],
        { encoding: 'utf8' },
      );
      if (created.status !== 0)
        throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
      for (const port of ports) {
        await cluster.waitFor(port, async (redis) =>
          (await redis.cluster('INFO')).includes('cluster_state:ok'),
        );
      }
    } catch (error) {
      await cluster.destroy();
      throw error;
    }
    return cluster;
  }

  /** Polls one node until the check passes (cluster formation has no event to await). */
  private async waitFor(port: number, check: (redis: Redis) => Promise<boolean>): Promise<void> {
    for (let tries = 0; tries < 200; tries++) {
      const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
      redis.on('error', () => undefined);
      try {
        await redis.connect();
        if (await check(redis)) return;
      } catch {
        // not up yet
      } finally {
        redis.disconnect();
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`cluster node ${port} did not become ready`);
  }

  async destroy(): Promise<void> {
    await Promise.all(
      this.children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}
