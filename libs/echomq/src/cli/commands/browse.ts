import { Argument, type Command } from 'commander';
import { STATE_SETS, type StateSet } from '../../keyspace';
import type { JobView } from '../../queue/job-view';
import { BROWSE_MAX, type BrowseOptions } from '../../queue/reads';
import { integerOption, priorityOption } from '../arguments';
import { firstLine, instant, plural } from '../format';
import type { Output } from '../io';
import { requireKnownQueue } from '../known-queue';
import { act, type RunState } from '../session';

interface BrowseFlags {
  readonly limit: number;
  readonly after?: string;
  readonly lane?: string;
  readonly priority?: number;
}

/** The instant that orders each set: enqueue for pending and dead, the deadline or run-at for the others. */
const WHEN: Record<StateSet, { title: string; of: (job: JobView) => Date | undefined }> = {
  pending: { title: 'enqueued', of: (job) => job.enqueuedAt },
  active: { title: 'lease deadline', of: (job) => job.leaseDeadline },
  schedule: { title: 'run at', of: (job) => job.runAt },
  dead: { title: 'enqueued', of: (job) => job.enqueuedAt },
};

function render(out: Output, set: StateSet, jobs: readonly JobView[], next: string | null): string {
  const c = out.colors;
  if (jobs.length === 0) return c.dim(`No jobs in ${set}.`);
  const table = out.table(
    ['id', 'name', 'lane', 'attempts', WHEN[set].title, 'last error'],
    jobs.map((job) => [
      job.id,
      job.name,
      job.priority > 0 ? `${job.lane} (priority ${job.priority})` : job.lane,
      `${job.attempts}/${job.maxAttempts}`,
      instant(WHEN[set].of(job)),
      c.red(firstLine(job.lastError)),
    ]),
  );
  const footer = next
    ? `${plural(jobs.length, 'job')}; the next page: --after ${next}`
    : plural(jobs.length, 'job');
  return `${table}\n${c.dim(footer)}`;
}

/** `emq browse <queue> <set>`: jobs in one set, pending and dead newest first, active and schedule soonest first. */
export function browseCommand(program: Command, state: RunState): void {
  program
    .command('browse')
    .description('list jobs in one set: pending and dead newest first, active and schedule soonest first')
    .argument('<queue>', 'a queue name')
    .addArgument(new Argument('<set>', 'the set').choices(STATE_SETS))
    .option('-n, --limit <count>', `how many jobs (1 to ${BROWSE_MAX})`, integerOption(1, BROWSE_MAX), 20)
    .option('--after <id>', 'pending and dead: the page after this id (the last one shown)')
    .option('--lane <lane>', "pending: this lane's jobs only")
    .option('--priority <level>', 'pending: this priority level only (0 to 9)', priorityOption)
    .action(
      act(state, async ({ queues, out }, queue: string, set: StateSet, flags: BrowseFlags) => {
        await requireKnownQueue(queues, queue);
        const options: BrowseOptions = {
          limit: flags.limit,
          ...(flags.after === undefined ? {} : { after: flags.after }),
          ...(flags.lane === undefined ? {} : { lane: flags.lane }),
          ...(flags.priority === undefined ? {} : { priority: flags.priority }),
        };
        const ids = await queues.browse(queue, set, options);
        // Not listJobs: the next page continues after the last id browsed, even when that job
        // finished meanwhile and its view is left out.
        const jobs = (await queues.getJobs(queue, ids)).filter((job): job is JobView => job !== undefined);
        // Pages continue by id, for pending and dead: a full page may have more behind it.
        const pages = set === 'pending' || set === 'dead';
        const next = pages && ids.length === flags.limit ? ids[ids.length - 1] : null;
        out.result({ queue, set, jobs, next }, () => render(out, set, jobs, next));
      }),
    );
}
