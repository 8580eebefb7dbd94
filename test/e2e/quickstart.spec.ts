import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../support/redis-server';

/**
 * The README's first command, as a new user runs it: `npm start` builds, starts a
 * redis-server of its own (nothing answers on the fresh port), the api and the
 * worker; a job posted over HTTP completes; Ctrl-C (SIGINT) stops everything.
 */
describe('npm start', () => {
  let start: ChildProcess | undefined;

  afterEach(() => {
    // Only matters when the test failed half way: take the whole group down.
    if (start?.pid === undefined || start.exitCode !== null || start.signalCode !== null) return;
    try {
      process.kill(-start.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  });

  function alive(pid: number): boolean {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }

  it('runs the whole system and shuts it down on SIGINT, leaving no process behind', async () => {
    const [apiPort, redisPort] = [await freePort(), await freePort()];
    start = spawn('npm', ['start'], {
      cwd: join(__dirname, '..', '..'),
      env: {
        ...process.env,
        PORT: String(apiPort),
        HOST: '127.0.0.1',
        REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        EMQ_LOG_FORMAT: 'text',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so SIGINT can go to the whole group as a terminal's Ctrl-C does.
      detached: true,
    });
    let output = '';
    const pids = new Map<string, number>();
    const listening = new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        for (const match of output.matchAll(/\[start\] (\S+) started \(pid (\d+)\)/g)) {
          pids.set(match[1], Number(match[2]));
        }
        if (/Listening on/.test(output) && /Worker started/.test(output)) resolve();
      };
      start!.stdout!.on('data', onData);
      start!.stderr!.on('data', onData);
      start!.once('exit', (code) => reject(new Error(`npm start exited early (${code}):\n${output}`)));
    });
    await listening;
    expect([...pids.keys()].sort()).toEqual(['api', 'redis-server', 'worker']);

    const base = `http://127.0.0.1:${apiPort}`;
    const posted = await fetch(`${base}/queues/demo/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'echo', data: { hi: 'there' } }),
    });
    expect(posted.status).toBe(201);
    const { id } = (await posted.json()) as { id: string };

    // Over HTTP there is no event to await: read the job back until it completes (bounded).
    let job: { state: string; result?: unknown } = { state: 'pending' };
    for (let tries = 0; tries < 200 && job.state !== 'completed'; tries++) {
      job = (await (await fetch(`${base}/queues/demo/jobs/${id}`)).json()) as typeof job;
      if (job.state !== 'completed') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(job).toMatchObject({ state: 'completed', result: { hi: 'there' } });

    const exited = new Promise<number | null>((resolve) => start!.once('exit', (code) => resolve(code)));
    process.kill(-start.pid!, 'SIGINT'); // Ctrl-C: the whole foreground group
    await exited;
    expect(output).toContain('[start] shutting down');
    for (const [name, pid] of pids) expect({ name, alive: alive(pid) }).toEqual({ name, alive: false });
  }, 180_000);
});
