import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../../test/support/redis-server';

/**
 * The benchmark's own throwaway redis-server: loopback only, a free port, no
 * persistence (--save '' --appendonly no), so disk writes never enter a figure.
 */
export class BenchRedisServer {
  /** Every server not yet stopped, so that an exit (a crash too) can end them all. */
  private static readonly live = new Set<BenchRedisServer>();
  private spawnError?: Error;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly child: ChildProcess,
  ) {
    child.once('error', (error) => (this.spawnError = error));
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<BenchRedisServer> {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'echomq-bench-redis-'));
    const server = new BenchRedisServer(port, dir, spawnRedis(port, dir));
    BenchRedisServer.live.add(server);
    await server.waitUntilReady();
    return server;
  }

  private async waitUntilReady(): Promise<void> {
    for (let tries = 0; tries < 400; tries++) {
      if (this.spawnError) throw new Error(`Could not start redis-server: ${this.spawnError.message}`);
      if (this.child.exitCode !== null) break;
      const probe = new Redis({
        port: this.port,
        host: '127.0.0.1',
        lazyConnect: true,
        retryStrategy: () => null,
      });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        await probe.ping();
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 25));
      } finally {
        probe.disconnect();
      }
    }
    throw new Error(`redis-server on port ${this.port} did not become ready`);
  }

  async stop(): Promise<void> {
    BenchRedisServer.live.delete(this);
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGKILL');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Synchronous last-resort stop of every server this process started, for its exit handler. */
  static killAll(): void {
    for (const server of BenchRedisServer.live) server.kill();
  }

  /** Synchronous last-resort stop, for process exit handlers. */
  kill(): void {
    BenchRedisServer.live.delete(this);
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function spawnRedis(port: number, dir: string): ChildProcess {
  return spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
}
