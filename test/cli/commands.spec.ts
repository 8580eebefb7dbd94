import type { INestApplication } from '@nestjs/common';
import { QueueService, UnrecoverableError, type Job, type JobView } from '@app/echomq';
import { EchoMqTestKit } from '@app/echomq/testing';
import { bootApp } from '../support/nest';
import { redisUrl, uniqueQueue } from '../support/redis';
import { closeAll, processorClass } from '../worker/fixtures/support';
import { emq, emqJson, uniquePrefix } from './support/cli';

interface StatsJson {
  queues: {
    queue: string;
    counts: Record<string, number>;
    paused: boolean;
    lanes: { lane: string; pending: number; paused: boolean }[];
    metrics: Record<string, number>;
  }[];
}

interface BrowseJson {
  queue: string;
  set: string;
  jobs: { id: string; name: string; lane: string; state: string; lastError?: string }[];
  next: string | null;
}

describe('the emq command line', () => {
  const prefix = uniquePrefix();
  const queue = uniqueQueue('cli');
  let app: INestApplication;
  let queues: QueueService;
  let kit: EchoMqTestKit;

  /** Jobs whose data says fail go to dead at once (UnrecoverableError); the others complete. */
  const Worker = processorClass<{ fail?: boolean }>(queue, {}, (job: Job<{ fail?: boolean }>) => {
    if (job.data.fail) throw new UnrecoverableError('refused on purpose');
    return 'done';
  });

  beforeAll(async () => {
    app = await bootApp([Worker], { keyPrefix: prefix, startProcessors: false });
    queues = app.get(QueueService);
    kit = EchoMqTestKit.from(app);
  });

  afterAll(async () => {
    await closeAll([app]);
  });

  /** `n` jobs in dead, their handler having refused them. */
  async function deadJobs(n: number): Promise<string[]> {
    const ids = await queues.enqueueMany(
      queue,
      Array.from({ length: n }, () => ({ data: { fail: true }, name: 'doomed' })),
    );
    await kit.runUntilIdle(queue);
    return ids;
  }

  afterEach(async () => {
    await queues.drain(queue);
    for (const id of await queues.browse(queue, 'dead', { limit: 1000 })) await queues.remove(queue, id);
    await queues.resume(queue);
  });

  it('stats lists every known queue with its four depths; --json adds lanes and counters', async () => {
    const other = uniqueQueue('cli-other');
    await queues.enqueue(other, { n: 1 }, { lane: 'tenant-a' });
    await queues.enqueue(other, { n: 2 }, { delayMs: 60_000 });
    await queues.enqueue(queue, { n: 3 });

    const text = await emq(prefix, ['stats']);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    for (const name of [queue, other]) expect(text.stdout).toContain(name);
    expect(text.stdout).toMatch(/pending\s*│\s*active\s*│\s*schedule\s*│\s*dead\s*│\s*paused/);

    const stats = await emqJson<StatsJson>(prefix, ['stats']);
    expect(stats.queues.map((s) => s.queue).sort()).toEqual([queue, other].sort());
    const otherStats = stats.queues.find((s) => s.queue === other)!;
    expect(otherStats).toMatchObject({
      counts: { pending: 1, active: 0, schedule: 1, dead: 0 },
      paused: false,
      metrics: { enqueued: 2 },
    });
    expect(otherStats.lanes).toEqual([
      expect.objectContaining({ lane: 'tenant-a', pending: 1, paused: false }),
    ]);
    await queues.obliterate(other);
  });

  it('stats of one queue shows its lanes and counters; colours only on a terminal, and never under NO_COLOR', async () => {
    await queues.enqueue(queue, { n: 1 }, { lane: 'tenant-b' });
    const piped = await emq(prefix, ['stats', queue]);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toContain('tenant-b');
    expect(piped.stdout).toContain('enqueued');
    expect(piped.stdout).not.toContain('\u001b[');

    const terminal = await emq(prefix, ['stats', queue], { tty: true });
    expect(terminal.stdout).toContain('\u001b[');
    const noColor = await emq(prefix, ['stats', queue], { tty: true, env: { NO_COLOR: '1' } });
    expect(noColor.stdout).not.toContain('\u001b[');
    const flag = await emq(prefix, ['stats', queue, '--no-color'], { tty: true });
    expect(flag.stdout).not.toContain('\u001b[');
    expect(flag.stdout).toBe(noColor.stdout);
  });

  it('browse lists pending newest first, pages with --after, and keeps to a lane', async () => {
    const ids = await queues.enqueueMany(queue, [
      { data: 1, name: 'first' },
      { data: 2, name: 'second', lane: 'tenant-c' },
      { data: 3, name: 'third' },
    ]);
    const all = await emqJson<BrowseJson>(prefix, ['browse', queue, 'pending']);
    expect(all).toMatchObject({ queue, set: 'pending', next: null });
    expect(all.jobs.map((job) => job.id)).toEqual([...ids].reverse());

    const page = await emqJson<BrowseJson>(prefix, ['browse', queue, 'pending', '-n', '2']);
    expect(page.jobs.map((job) => job.id)).toEqual([ids[2], ids[1]]);
    expect(page.next).toBe(ids[1]);
    const rest = await emqJson<BrowseJson>(prefix, [
      'browse',
      queue,
      'pending',
      '-n',
      '2',
      '--after',
      page.next!,
    ]);
    expect(rest.jobs.map((job) => job.id)).toEqual([ids[0]]);

    const lane = await emqJson<BrowseJson>(prefix, ['browse', queue, 'pending', '--lane', 'tenant-c']);
    expect(lane.jobs.map((job) => [job.id, job.lane])).toEqual([[ids[1], 'tenant-c']]);

    const text = await emq(prefix, ['browse', queue, 'pending']);
    expect(text.code).toBe(0);
    for (const id of ids) expect(text.stdout).toContain(id);
    expect(text.stdout).toContain('3 jobs');
  });

  it('browse shows schedule by run-at and dead with the last error', async () => {
    const [later] = await queues.enqueueMany(queue, [{ data: 1, delayMs: 60_000 }]);
    const scheduled = await emqJson<BrowseJson>(prefix, ['browse', queue, 'schedule']);
    expect(scheduled.jobs).toEqual([
      expect.objectContaining({ id: later, state: 'schedule', runAt: expect.any(String) }),
    ]);

    const [dead] = await deadJobs(1);
    const morgue = await emqJson<BrowseJson>(prefix, ['browse', queue, 'dead']);
    expect(morgue.jobs).toEqual([
      expect.objectContaining({
        id: dead,
        state: 'dead',
        lastError: expect.stringContaining('refused on purpose'),
      }),
    ]);
    const text = await emq(prefix, ['browse', queue, 'dead']);
    expect(text.stdout).toContain('refused on purpose');
    expect((await emqJson<BrowseJson>(prefix, ['browse', queue, 'active'])).jobs).toEqual([]);
  });

  it('job shows one job; --json gives its view', async () => {
    const id = await queues.enqueue(
      queue,
      { to: 'someone' },
      { name: 'greet', lane: 'tenant-d', priority: 3 },
    );
    const view = await emqJson<JobView>(prefix, ['job', queue, id]);
    expect(view).toMatchObject({
      id,
      queue,
      name: 'greet',
      state: 'pending',
      data: { to: 'someone' },
      lane: 'tenant-d',
      priority: 3,
      attempts: 0,
      enqueuedAt: expect.any(String),
    });
    const text = await emq(prefix, ['job', queue, id]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('"to": "someone"');
    expect(text.stdout).toContain('tenant-d, priority 3');
  });

  it('an unknown job is JOB_NOT_FOUND (exit 1), a malformed id INVALID_JOB_ID (exit 2): one line each, no stack', async () => {
    const gone = await queues.enqueue(queue, 1);
    await queues.remove(queue, gone);
    expect(await emq(prefix, ['job', queue, gone])).toEqual({
      code: 1,
      stdout: '',
      stderr: `emq: JOB_NOT_FOUND: Job ${gone} was not found\n`,
    });
    const bad = await emq(prefix, ['job', queue, 'JOBnope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^emq: INVALID_JOB_ID: Invalid job id "JOBnope"[^\n]*\n$/);
    expect(bad.stdout).toBe('');
  });

  it('an unknown queue is UNKNOWN_QUEUE naming the known ones, a malformed name INVALID_QUEUE_NAME', async () => {
    await queues.enqueue(queue, 1);
    const unknown = await emq(prefix, ['stats', 'no-such-queue']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(
      /^emq: UNKNOWN_QUEUE: Queue 'no-such-queue' is not known under key prefix/,
    );
    expect(unknown.stderr).toContain(queue);
    expect(unknown.stderr.split('\n')).toHaveLength(2);
    for (const args of [
      ['browse', 'no-such-queue', 'dead'],
      ['pause', 'no-such-queue'],
      ['doctor', 'no-such-queue'],
    ]) {
      expect(await emq(prefix, args)).toMatchObject({
        code: 1,
        stderr: expect.stringContaining('UNKNOWN_QUEUE'),
      });
    }
    expect(await emq(prefix, ['stats', 'bad{name}'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^emq: INVALID_QUEUE_NAME: /),
    });
  });

  it('an unreachable Redis is one line REDIS_UNAVAILABLE, exit 1, once the command deadline passed', async () => {
    const result = await emq(prefix, ['--url', 'redis://127.0.0.1:1', '--timeout', '200', 'stats']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^emq: REDIS_UNAVAILABLE: Redis at 127\.0\.0\.1:1 was not reachable within \d+ ms[^\n]*\n$/,
    );
  });

  it("speaks TLS to a rediss:// URL: against the suite's plain-text Redis the handshake fails, so nothing is read", async () => {
    const plain = new URL(redisUrl());
    const tls = `rediss://${plain.host}`;
    const result = await emq(prefix, ['--url', tls, '--timeout', '300', 'stats', queue]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^emq: REDIS_UNAVAILABLE: /);
  });

  it('retry moves one dead job back to pending, and --all-dead every dead job', async () => {
    const [one, two, three] = await deadJobs(3);
    expect(await emqJson(prefix, ['retry', queue, one])).toEqual({ queue, retried: 1, id: one });
    expect((await queues.getJob(queue, one))?.state).toBe('pending');

    const text = await emq(prefix, ['retry', queue, '--all-dead']);
    expect(text).toEqual({ code: 0, stdout: 'Retried 2 dead jobs.\n', stderr: '' });
    for (const id of [two, three]) expect((await queues.getJob(queue, id))?.state).toBe('pending');

    const notDead = await emq(prefix, ['retry', queue, one]);
    expect(notDead).toEqual({ code: 1, stdout: '', stderr: `emq: JOB_STATE: Job ${one} is not dead\n` });
  });

  it('retry takes an id or --all-dead: neither, or both, is bad usage and sends nothing', async () => {
    const [dead] = await deadJobs(1);
    for (const args of [
      ['retry', queue],
      ['retry', queue, dead, '--all-dead'],
    ]) {
      const result = await emq(prefix, args);
      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr).toContain('retry takes a job id or --all-dead');
    }
    expect((await queues.getJob(queue, dead))?.state).toBe('dead');
  });

  it('remove removes a job in any state and says where it was', async () => {
    const [pending, later] = await queues.enqueueMany(queue, [{ data: 1 }, { data: 2, delayMs: 60_000 }]);
    expect(await emqJson(prefix, ['remove', queue, later])).toEqual({
      queue,
      id: later,
      removedFrom: 'schedule',
    });
    expect(await emq(prefix, ['remove', queue, pending])).toEqual({
      code: 0,
      stdout: `Removed ${pending} (it was pending).\n`,
      stderr: '',
    });
    expect(await queues.getJob(queue, pending)).toBeUndefined();
    expect(await emq(prefix, ['remove', queue, pending])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('JOB_NOT_FOUND'),
    });
  });

  it('pause and resume the queue, and with --lane one lane of it', async () => {
    await queues.enqueue(queue, 1, { lane: 'tenant-e' });
    expect(await emqJson(prefix, ['pause', queue])).toEqual({ queue, lane: null, paused: true });
    expect(await queues.isPaused(queue)).toBe(true);
    expect(await emq(prefix, ['resume', queue])).toEqual({
      code: 0,
      stdout: `Queue ${queue}: resumed.\n`,
      stderr: '',
    });
    expect(await queues.isPaused(queue)).toBe(false);

    expect(await emqJson(prefix, ['pause', queue, '--lane', 'tenant-e'])).toEqual({
      queue,
      lane: 'tenant-e',
      paused: true,
    });
    expect(await queues.lanes(queue)).toEqual([expect.objectContaining({ lane: 'tenant-e', paused: true })]);
    expect(await emqJson(prefix, ['resume', queue, '--lane', 'tenant-e'])).toEqual({
      queue,
      lane: 'tenant-e',
      paused: false,
    });
    expect(await queues.lanes(queue)).toEqual([expect.objectContaining({ lane: 'tenant-e', paused: false })]);
    expect(await emq(prefix, ['pause', queue, '--lane', 'bad lane'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^emq: INVALID_ARGUMENT: lane must be/),
    });
  });

  it.each([
    [['nope'], /unknown command 'nope'/],
    [['browse', 'q'], /missing required argument 'set'/],
    [['browse', 'q', 'finished'], /'finished' is invalid for argument 'set'/],
    [['browse', 'q', 'dead', '-n', '0'], /expected an integer from 1 to 1000/],
    [['stats', '--frobnicate'], /unknown option '--frobnicate'/],
    [['doctor', '--grace', 'soon'], /expected an integer from 0 to 3600000/],
    [['stat'], /unknown command 'stat' \(Did you mean stats\?\)/],
  ])(
    "bad usage %j exits 2 with one line on stderr, emq: USAGE: and commander's message",
    async (args, message) => {
      const result = await emq(prefix, args);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^emq: USAGE: [^\n]+\n$/);
      expect(result.stderr).toMatch(message);
    },
  );

  it('a bare emq is bad usage too: the help text on stderr, exit 2', async () => {
    const result = await emq(prefix, []);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^Usage: emq \[options\] \[command\]/);
  });

  it('--help and --version exit 0 on stdout, and need no Redis', async () => {
    const nowhere = ['--url', 'redis://127.0.0.1:1'];
    const help = await emq(prefix, [...nowhere, '--help']);
    expect(help.code).toBe(0);
    for (const command of ['stats', 'browse', 'job', 'retry', 'remove', 'pause', 'resume', 'doctor']) {
      expect(help.stdout).toContain(command);
    }
    const version = await emq(prefix, [...nowhere, '--version']);
    expect(version).toEqual({ code: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+/), stderr: '' });
  });
});
