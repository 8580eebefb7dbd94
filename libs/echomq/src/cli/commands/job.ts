import type { Command } from 'commander';
import { JobNotFoundError } from '../../errors';
import type { JobView } from '../../queue/job-view';
import { cut, firstLine, instant, json, state } from '../format';
import type { Output } from '../io';
import { requireKnownQueue } from '../known-queue';
import { act, type RunState } from '../session';

/** Log lines shown in a terminal; --json carries every line the row keeps. */
const LOG_LINES_SHOWN = 20;

function render(out: Output, job: JobView): string {
  const c = out.colors;
  const rows: [string, string][] = [
    ['id', job.id],
    ['queue', job.queue],
    ['name', job.name],
    ['state', state(c, job.state)],
    [
      'attempts',
      `${job.attempts} of ${job.maxAttempts}${job.ownMaxAttempts ? ' (its own)' : ''}, ${job.attemptsLeft} left`,
    ],
    ['lane', job.priority > 0 ? `${job.lane}, priority ${job.priority}` : job.lane],
    ['enqueued', instant(job.enqueuedAt)],
  ];
  if (job.runAt) rows.push(['run at', instant(job.runAt)]);
  if (job.leaseDeadline) rows.push(['lease deadline', instant(job.leaseDeadline)]);
  if (job.finishedAt) rows.push(['finished', instant(job.finishedAt)]);
  if (job.timeoutMs !== null) rows.push(['timeout', `${job.timeoutMs} ms`]);
  if (job.lastError !== undefined) rows.push(['last error', c.red(cut(job.lastError, 4_000))]);
  rows.push(['data', json(job.data)]);
  if (job.result !== undefined) rows.push(['result', json(job.result)]);
  if (job.progress !== undefined) rows.push(['progress', json(job.progress)]);
  if (job.logs.length > 0) {
    const shown = job.logs.slice(-LOG_LINES_SHOWN);
    const hidden = job.logsDropped + job.logs.length - shown.length;
    rows.push([
      'logs',
      [
        ...(hidden > 0 ? [c.dim(`(${hidden} earlier lines)`)] : []),
        ...shown.map((line) => firstLine(line, 200)),
      ].join('\n'),
    ]);
  }
  return out.table(['field', 'value'], rows);
}

/** `emq job <queue> <id>`: one job and its state, data, attempts, last error and logs. */
export function jobCommand(program: Command, state: RunState): void {
  program
    .command('job')
    .description('one job: its state, data, attempts, last error, result, progress and logs')
    .argument('<queue>', 'a queue name')
    .argument('<id>', 'a job id')
    .action(
      act(state, async ({ queues, out }, queue: string, id: string) => {
        await requireKnownQueue(queues, queue);
        const job = await queues.getJob(queue, id);
        if (!job) throw new JobNotFoundError(id);
        out.result(job, () => render(out, job));
      }),
    );
}
