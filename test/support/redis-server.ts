import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A free TCP port on loopback, found by letting the OS pick one. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface RedisServerOptions {
  readonly port?: number;
  /** Extra redis-server arguments, e.g. ['--appendonly', 'yes']. */
  readonly args?: readonly string[];
}

/**
 * A throwaway redis-server on loopback (no persistence unless asked), for tests.
 * restart() stops it and starts it again on the same port and data folder.
 */
export class RedisServer {
  private child?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'echomq-redis-'));

  private constructor(
    readonly port: number,
    private readonly args: readonly string[],
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const server = new RedisServer(options.port ?? (await freePort()), options.args ?? []);
    await server.launch();
    return server;
  }

  private async launch(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.dir,
        ...this.args,
      ],
      { stdio: 'ignore' },
    );
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve());
    });
    await this.waitUntilReady();
  }

  /** PINGs over a plain socket (no client library timers left behind) until the server answers. */
  private async waitUntilReady(): Promise<void> {
    for (let tries = 0; tries < 400; tries++) {
      if (await this.answersPing()) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`redis-server on port ${this.port} did not become ready`);
  }

  private answersPing(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = connect({ port: this.port, host: '127.0.0.1' });
      const done = (ok: boolean): void => {
        socket.destroy();
        resolve(ok);
      };
      socket.setTimeout(1_000, () => done(false));
      socket.once('error', () => done(false));
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.child = undefined;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.launch();
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
