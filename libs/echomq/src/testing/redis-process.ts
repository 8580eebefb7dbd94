import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisServerNotFoundError, TestRedisError } from './errors';

/** Ports tried when the one the OS offered was taken before redis-server bound it. */
const PORT_TRIES = 3;
const PING_EVERY_MS = 20;
const LOG_TAIL_LINES = 8;

/** A free TCP port on 127.0.0.1, found by letting the OS pick one. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The process id of the redis-server answering on a loopback port (INFO server), if any answers. */
function serverPid(port: number, timeoutMs = 1_000): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let text = '';
    const done = (pid: number | undefined): void => {
      socket.destroy();
      resolve(pid);
    };
    socket.setTimeout(timeoutMs, () => done(undefined));
    socket.once('error', () => done(undefined));
    socket.once('connect', () => socket.write('INFO server\r\n'));
    socket.on('data', (data) => {
      text += data.toString();
      const found = /process_id:(\d+)\r\n/.exec(text);
      if (found) done(Number(found[1]));
      else if (text.startsWith('-')) done(undefined); // LOADING and the like: not ready yet
    });
  });
}

/**
 * One throwaway redis-server child: bound to 127.0.0.1 on a free port, with no
 * persistence (no RDB, no AOF) and its working folder and log in a temporary folder
 * removed at stop(). If a plain node process exits without stop(), the child is killed with it
 * (jest runs test files with an exit hook that never fires: there, stop() in afterAll is needed).
 */
export class RedisProcess {
  private readonly killOnExit = (): void => {
    this.child.kill('SIGKILL');
  };

  private constructor(
    readonly port: number,
    private readonly child: ChildProcess,
    private readonly dir: string,
  ) {
    process.once('exit', this.killOnExit);
    // A forgotten stop() must not keep the test process alive; the exit hook still kills it.
    child.unref();
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  static async start(command: string, readyTimeoutMs: number): Promise<RedisProcess> {
    for (let tries = 1; ; tries++) {
      const port = await freeLoopbackPort();
      const dir = await mkdtemp(join(tmpdir(), 'echomq-test-redis-'));
      try {
        return await RedisProcess.launch(command, port, dir, readyTimeoutMs);
      } catch (error) {
        await rm(dir, { recursive: true, force: true });
        const portTaken = error instanceof TestRedisError && /already in use/i.test(error.message);
        if (!portTaken || tries >= PORT_TRIES) throw error;
      }
    }
  }

  private static async launch(command: string, port: number, dir: string, readyTimeoutMs: number) {
    const log = join(dir, 'redis.log');
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    const child = spawn(command, [...args, '--dir', dir, '--logfile', log], { stdio: 'ignore' });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (error: NodeJS.ErrnoException) =>
        reject(error.code === 'ENOENT' ? new RedisServerNotFoundError(command) : error),
      );
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + readyTimeoutMs;
    let exitedEarly = false;
    void exited.then(() => (exitedEarly = true));
    while (!exitedEarly && Date.now() < deadline) {
      const answering = await serverPid(port);
      if (answering === child.pid && !exitedEarly) return new RedisProcess(port, child, dir);
      if (answering !== undefined && answering !== child.pid) {
        // Another server took the port between the probe and our bind (a parallel suite):
        // its PONG must not pass for ours. Ours is failing its bind; try another port.
        child.kill('SIGKILL');
        await exited;
        throw new TestRedisError(`127.0.0.1:${port} is already in use by another redis-server`);
      }
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, PING_EVERY_MS))]);
    }
    if (!exitedEarly) {
      child.kill('SIGKILL');
      await exited;
    }
    const why = exitedEarly ? 'exited before it answered' : `did not answer within ${readyTimeoutMs} ms`;
    throw new TestRedisError(`${command} on 127.0.0.1:${port} ${why}. Its log:\n${await logTail(log)}`);
  }

  /** Kills the server (nothing to flush: it keeps no data) and removes its folder. Idempotent. */
  async stop(): Promise<void> {
    process.removeListener('exit', this.killOnExit);
    if (this.running) {
      // Referenced again, so the process stays alive until the exit is seen.
      this.child.ref();
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGKILL');
      await exited;
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}

async function logTail(path: string): Promise<string> {
  try {
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
    return lines.slice(-LOG_TAIL_LINES).join('\n') || '(empty)';
  } catch {
    return '(no log was written)';
  }
}
