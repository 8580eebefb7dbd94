import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { EchoMqConnection, QueueService } from '@app/echomq';
import { bookOf, readLedger, type LedgerLine } from './ledger';
import { childEntry } from './paths';
import { ChildHandle, stepClock } from './processes';
import { settle } from './verdict';

export interface ClockStepParams {
  /** Jobs in all, half claimed by each worker. */
  readonly jobs: number;
  readonly leaseMs: number;
  /** How far each worker's wall clock jumps: one forward by this, the other back. */
  readonly stepSeconds: number;
}

interface SteppedWorker {
  readonly label: 'stepAhead' | 'stepBehind';
  readonly sign: 1 | -1;
  readonly clockFile: string;
  readonly handle: ChildHandle;
}

/** How far off a completion's own time may be from the step and still show the step took. */
const STEP_READING_SLACK_S = 60;

/**
 * The clock-skew scenario's step phase: two workers whose wall clocks jump mid-run, one
 * `stepSeconds` forward and one back (libfaketime reading its offset from a file on every
 * call; their monotonic clocks untouched), while each runs jobs twice as long as the lease, so
 * only confirmed heartbeats keep them. Local deadlines run on the monotonic clock, so nothing
 * may be aborted, failed, reaped or run twice; a lease estimate on the wall clock aborted
 * every running job at the forward step, and let handlers outlive their leases at the back one.
 */
export async function clockStepPhase(
  context: {
    readonly connection: EchoMqConnection;
    readonly queues: QueueService;
    readonly queue: string;
    readonly workDir: string;
    readonly log: (line: string) => void;
  },
  params: ClockStepParams,
): Promise<{ figures: Record<string, number | string>; broken: string[] }> {
  const { queues, queue } = context;
  const dir = join(context.workDir, 'step');
  mkdirSync(dir, { recursive: true });
  const perWorker = Math.ceil(params.jobs / 2);
  const workers: SteppedWorker[] = (['stepAhead', 'stepBehind'] as const).map((label, index) => {
    const clockFile = join(dir, `${label}.faketime`);
    stepClock(clockFile, 0);
    const config = {
      connection: context.connection,
      queue,
      ledgerDir: dir,
      concurrency: perWorker,
      leaseMs: params.leaseMs,
      maxAttempts: 3,
      module: { reaper: { intervalMs: 250 } },
    };
    const handle = new ChildHandle(childEntry('skew-worker-child'), config, { clockFile });
    return { label, sign: index === 0 ? 1 : -1, clockFile, handle };
  });
  try {
    await Promise.all(workers.map((worker) => worker.handle.start()));
    const job = { name: 'work', data: { ms: params.leaseMs * 2 } };
    // Half first: one worker fills its slots with them, so the other takes the second half.
    const ids: string[] = await queues.enqueueMany(
      queue,
      Array.from({ length: perWorker }, () => job),
    );
    await untilRuns(dir, ids.length, 30_000);
    ids.push(
      ...(await queues.enqueueMany(
        queue,
        Array.from({ length: params.jobs - perWorker }, () => job),
      )),
    );
    await untilRuns(dir, ids.length, 30_000);
    const runningAtStep = new Map(workers.map((w) => [w.label, runsOf(dir, w.handle).length]));
    for (const worker of workers) stepClock(worker.clockFile, worker.sign * params.stepSeconds);
    context.log(
      `clocks stepped ${params.stepSeconds} s forward and back with ${ids.length} jobs running (lease ${params.leaseMs} ms)`,
    );
    const final = await settle(queues, queue, 30_000 + params.leaseMs * 6);
    const metrics = await queues.metrics(queue);
    const readAt = Date.now();
    const lines = readLedger(dir);
    return judgeStep(lines, ids, workers, runningAtStep, metrics, readAt, params, final.settled);
  } finally {
    await Promise.all(workers.map((worker) => worker.handle.kill('SIGKILL')));
  }
}

function runsOf(dir: string, handle: ChildHandle): LedgerLine[] {
  return readLedger(dir).filter((line) => line.kind === 'run' && handle.pids.includes(line.pid));
}

/** Waits until `count` handlers have started (the ledger: no event says so). */
async function untilRuns(dir: string, count: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (bookOf(readLedger(dir)).runs.size < count) {
    if (Date.now() > deadline) throw new Error(`the step phase's ${count} jobs did not all start`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function judgeStep(
  lines: readonly LedgerLine[],
  ids: readonly string[],
  workers: readonly SteppedWorker[],
  runningAtStep: ReadonlyMap<string, number>,
  metrics: Readonly<Record<string, number>>,
  readAt: number,
  params: ClockStepParams,
  settled: boolean,
): { figures: Record<string, number | string>; broken: string[] } {
  const book = bookOf(lines);
  const broken: string[] = [];
  let extraRuns = 0;
  let notFirstAttempt = 0;
  for (const id of ids) {
    extraRuns += Math.max(0, (book.runs.get(id)?.length ?? 0) - 1);
    const done = book.done.get(id) ?? [];
    if (done.length !== 1 || done[0] !== 1) notFirstAttempt += 1;
  }
  const failed = metrics.failed ?? 0;
  const reaped = metrics.reaped ?? 0;
  const stale = metrics.stale ?? 0;
  const figures: Record<string, number | string> = {
    stepJobs: ids.length,
    stepFailed: failed,
    stepExtraRuns: extraRuns,
    stepNotFirstAttempt: notFirstAttempt,
    stepReaped: reaped,
    stepStale: stale,
  };
  if (failed > 0) broken.push(`${failed} jobs failed when their worker's clock stepped`);
  if (extraRuns > 0) broken.push(`${extraRuns} extra handler runs after a clock step`);
  if (notFirstAttempt > 0)
    broken.push(`${notFirstAttempt} step-phase jobs did not complete on their first attempt`);
  if (reaped > 0 || stale > 0) broken.push(`clock step: ${reaped} leases reaped, ${stale} calls stale`);
  if (!settled) broken.push('the step phase did not settle');
  for (const worker of workers) {
    const running = runningAtStep.get(worker.label) ?? 0;
    figures[`${worker.label}Running`] = running;
    if (running === 0) broken.push(`${worker.label}: no job was running when its clock stepped`);
    // Its completions carry the stepped clock: the step took.
    const done = lines.filter((line) => line.kind === 'done' && worker.handle.pids.includes(line.pid));
    const offsets = done.map((line) => Math.round((line.at - readAt) / 1_000));
    const off = offsets.filter((s) => Math.abs(s - worker.sign * params.stepSeconds) > STEP_READING_SLACK_S);
    figures[`${worker.label}ClockS`] = offsets.length === 0 ? '-' : offsets[0];
    if (offsets.length === 0 || off.length > 0)
      broken.push(
        `${worker.label}: its clock did not read ${worker.sign * params.stepSeconds} s off after the step`,
      );
  }
  return { figures, broken };
}
