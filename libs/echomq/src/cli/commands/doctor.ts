import type { Command } from 'commander';
import {
  DEFAULT_LEASE_GRACE_MS,
  discoverQueues,
  nothingLeft,
  runDoctor,
  type DoctorReport,
  type QueueDiagnosis,
  type SkippedQueue,
} from '../../doctor';
import { isPhysicalQueueName } from '../../keyspace';
import type { QueueService } from '../../queue/queue.service';
import type { ScriptedClient } from '../../scripts';
import { integerOption } from '../arguments';
import { count, plural } from '../format';
import type { Output } from '../io';
import { requireKnownQueue } from '../known-queue';
import { EXIT_FAILED, EXIT_INCOMPLETE, EXIT_OK } from '../exit-codes';
import { act, type RunState } from '../session';

interface DoctorFlags {
  readonly repair?: boolean;
  readonly grace: number;
  readonly ids: number;
}

function renderQueue(out: Output, diagnosis: QueueDiagnosis, repairing: boolean): string {
  const c = out.colors;
  if (!diagnosis.checked) {
    const reason = diagnosis.unchecked.map((u) => u.reason).join('; ');
    return `${c.yellow('?')} ${c.bold(JSON.stringify(diagnosis.queue))}: not checked: ${reason}`;
  }
  const { members, rows, laneSets } = diagnosis.scanned;
  const scanned = c.dim(
    `(${plural(members, 'set member')}, ${plural(rows, 'row')}, ${plural(laneSets, 'lane pending set')} checked)`,
  );
  if (diagnosis.findings.length === 0)
    return `${c.green('✔')} ${c.bold(diagnosis.queue)}: healthy ${scanned}`;
  const head = `${c.red('✘')} ${c.bold(diagnosis.queue)}: ${plural(diagnosis.findings.length, 'problem')} ${scanned}`;
  const table = out.table(
    ['finding', 'count', 'first ids', ...(repairing ? ['repair'] : [])],
    diagnosis.findings.map((finding) => {
      const shown = finding.ids.map((id, i) => `${id}: ${finding.details[i]}`);
      if (finding.count > finding.ids.length)
        shown.push(c.dim(`and ${count(finding.count - finding.ids.length)} more`));
      return [
        `${c.yellow(finding.kind)}\n${c.dim(finding.problem)}`,
        count(finding.count),
        shown.join('\n'),
        ...(repairing ? [`${count(finding.repaired)} repaired: ${finding.repair ?? ''}`] : []),
      ];
    }),
    { right: [1], widths: repairing ? [34, 8, 46, 34] : [40, 8, 60] },
  );
  return `${head}\n${table}`;
}

function render(out: Output, report: DoctorReport): string {
  const c = out.colors;
  if (report.queues.length === 0) return c.dim('No queues are known under this key prefix.');
  const parts = report.queues.map((queue) => renderQueue(out, queue, report.repair));
  const unchecked = [
    ...report.queues.flatMap((queue) =>
      queue.checked ? queue.unchecked.map((u) => ({ ...u, check: `${queue.queue}: ${u.check}` })) : [],
    ),
    ...report.unchecked,
  ];
  parts.push(c.dim(['Not checked:', ...unchecked.map((u) => `  - ${u.check}: ${u.reason}`)].join('\n')));
  return parts.join('\n\n');
}

/**
 * Every physical queue to look at under the prefix (each partition of a partitioned queue is one,
 * checked and reported by its own name, `emails#2`): the registry's, and those a SCAN finds by
 * their format key (the reapers prune idle queues from the registry, and a queue holding only
 * orphan rows is idle). A registry entry that is no queue name is skipped, and reported as not checked.
 */
async function everyQueue(
  queues: QueueService,
  redis: ScriptedClient,
): Promise<{ names: string[]; skipped: SkippedQueue[] }> {
  const registered = await queues.listPhysicalQueues();
  const names = new Set(await discoverQueues(redis, queues.settings.keyPrefix));
  const skipped: SkippedQueue[] = [];
  for (const name of registered) {
    if (isPhysicalQueueName(name)) names.add(name);
    else
      skipped.push({
        queue: name,
        reason: 'a registry entry that is no queue name: nothing was read under it',
      });
  }
  return { names: [...names].sort(), skipped };
}

/**
 * The physical queues of the queue named: itself when it is unpartitioned (or a partition named
 * by its own name), else each of its partitions and itself that holds anything, by its format
 * key or the registry (every queue records its format on first use). A partition never used
 * has no keys to check, and a queue partitioned from its first job has none of its own.
 */
async function physicalQueuesOf(
  queues: QueueService,
  redis: ScriptedClient,
  queue: string,
): Promise<string[]> {
  const layout = await queues.partitionLayout(queue);
  if (!layout.partitioned) return [layout.queue];
  const registered = new Set(await queues.listPhysicalQueues());
  const used = await Promise.all(
    layout.physical.map(
      async (name) => registered.has(name) || (await redis.exists(queues.context(name).keys.format)) === 1,
    ),
  );
  return layout.physical.filter((_, index) => used[index]);
}

/** 1 when something found is left unrepaired, else 3 when a queue could not be checked, else 0. */
export function doctorExitCode(report: DoctorReport): number {
  if (!nothingLeft(report.queues)) return EXIT_FAILED;
  return report.complete ? EXIT_OK : EXIT_INCOMPLETE;
}

/**
 * `emq doctor [queue] [--repair]`: checks the stored state of a queue (every queue under the
 * prefix when omitted) against the invariants; a partitioned queue is checked partition by
 * partition, each reported by its physical name. Exit 1 when it finds a problem it did not
 * repair, 3 when it could not check a queue as a whole.
 */
export function doctorCommand(program: Command, state: RunState): void {
  program
    .command('doctor')
    .description(
      'check queues against the invariants (every queue under the prefix if omitted, each partition ' +
        'of a partitioned queue by its own name); --repair mends what it finds',
    )
    .argument('[queue]', 'a queue name (every partition of it), or one partition (emails#2)')
    .option('--repair', 'mend each problem as it is found (safe beside running workers)')
    .option(
      '--grace <ms>',
      'how long past its deadline a lease may be before it counts as not reaped; keep it above the ' +
        "workers' reaper interval (default: twice the longest interval allowed)",
      integerOption(0, 3_600_000),
      DEFAULT_LEASE_GRACE_MS,
    )
    .option('--ids <count>', 'ids listed per finding', integerOption(1, 1_000), 10)
    .action(
      act(state, async ({ queues, redis, out }, queue: string | undefined, flags: DoctorFlags) => {
        if (queue !== undefined) await requireKnownQueue(queues, queue, { anyKey: true });
        const { names, skipped } =
          queue === undefined
            ? await everyQueue(queues, redis)
            : { names: await physicalQueuesOf(queues, redis, queue), skipped: [] };
        const report = await runDoctor(
          names.map((name) => queues.context(name)),
          { repair: flags.repair === true, leaseGraceMs: flags.grace, idsShown: flags.ids },
          skipped,
        );
        out.result(report, () => render(out, report));
        return doctorExitCode(report);
      }),
    );
}
