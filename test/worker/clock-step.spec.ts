import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { QueueService } from '@app/echomq';
import { bookOf, readLedger, type LedgerLine } from '../chaos/support/ledger';
import { childEntry } from '../chaos/support/paths';
import { ChildHandle, stepClock } from '../chaos/support/processes';
import { bootApp } from '../support/nest';
import { redisUrl, uniqueQueue } from '../support/redis';
import { waitUntil } from './fixtures/support';

/**
 * A worker whose wall clock is stepped five minutes forward while it runs a job longer than
 * its lease (libfaketime in a child process, reading its offset from a file on every call;
 * its monotonic clock untouched), as NTP or an operator stepping a host's clock would do.
 * Every local deadline (the lease estimate that aborts a handler, the repeat windows) runs on
 * the monotonic clock, so the handler is not aborted and the job completes on its first
 * attempt; on the wall clock the step made every running lease look expired at the next
 * heartbeat sweep, aborting the handler and failing the job into a retry.
 */
const LEASE_MS = 1_000;
/** Longer than the lease: only confirmed heartbeats keep it. */
const JOB_MS = 2_500;
const STEP_SECONDS = 300;

let dir: string;
let worker: ChildHandle | undefined;
let producer: INestApplication | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'echomq-clock-step-'));
});

afterEach(async () => {
  await worker?.kill('SIGKILL');
  await producer?.close();
  worker = producer = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function linesOf(id: string, kind: LedgerLine['kind']): LedgerLine[] {
  return readLedger(dir).filter((line) => line.id === id && line.kind === kind);
}

describe('a worker whose wall clock is stepped mid-job', () => {
  it('keeps the job: no handler aborted, completed on its first attempt', async () => {
    const queue = uniqueQueue('clock-step');
    const clockFile = join(dir, 'faketime');
    stepClock(clockFile, 0);
    worker = new ChildHandle(
      childEntry('skew-worker-child'),
      {
        connection: { url: redisUrl() },
        queue,
        ledgerDir: dir,
        concurrency: 1,
        leaseMs: LEASE_MS,
        maxAttempts: 3,
        module: { reaper: { intervalMs: 100 } },
      },
      { clockFile },
    );
    await worker.start();
    producer = await bootApp([]);
    const queues = producer.get(QueueService);
    const id = await queues.enqueue(queue, { ms: JOB_MS }, { name: 'work' });

    await waitUntil(() => linesOf(id, 'run').length > 0, 'the handler to start', 20_000);
    stepClock(clockFile, STEP_SECONDS);
    await waitUntil(() => linesOf(id, 'done').length > 0, 'the completion', 20_000);

    const book = bookOf(readLedger(dir));
    expect(book.runs.get(id)).toEqual([{ attempt: 1, pid: worker.pid }]);
    expect(book.done.get(id)).toEqual([1]);
    const [done] = linesOf(id, 'done');
    expect(done.n).toBe(1);
    // The step took: the worker wrote its completion on a clock five minutes ahead.
    expect(done.at - Date.now()).toBeGreaterThan((STEP_SECONDS - 30) * 1_000);
    expect(await queues.getJob(queue, id)).toMatchObject({ state: 'completed', attempts: 1 });
    const metrics = await queues.metrics(queue);
    expect(metrics).toMatchObject({ claimed: 1, completed: 1 });
    expect(metrics.failed ?? 0).toBe(0);
  });
});
