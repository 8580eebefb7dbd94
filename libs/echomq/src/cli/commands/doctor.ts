import type { Command } from 'commander';
import { runDoctor, type DoctorReport, type QueueDiagnosis } from '../../doctor';
import { integerOption } from '../arguments';
import { count, plural } from '../format';
import type { Output } from '../io';
import { requireKnownQueue } from '../known-queue';
import { act, type RunState } from '../session';

interface DoctorFlags {
  readonly repair?: boolean;
  readonly grace: number;
  readonly ids: number;
}

function renderQueue(out: Output, diagnosis: QueueDiagnosis, repairing: boolean): string {
  const c = out.colors;
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
      queue.unchecked.map((u) => ({ ...u, check: `${queue.queue}: ${u.check}` })),
    ),
    ...report.unchecked,
  ];
  parts.push(c.dim(['Not checked:', ...unchecked.map((u) => `  - ${u.check}: ${u.reason}`)].join('\n')));
  return parts.join('\n\n');
}

/**
 * `emq doctor [queue] [--repair]`: checks the stored state of a queue (every known queue when
 * omitted) against the invariants. Exit 1 when it finds a problem it did not repair.
 */
export function doctorCommand(program: Command, state: RunState): void {
  program
    .command('doctor')
    .description(
      'check queues against the invariants (every known queue if omitted); --repair mends what it finds',
    )
    .argument('[queue]', 'a queue name')
    .option('--repair', 'mend each problem as it is found (safe beside running workers)')
    .option(
      '--grace <ms>',
      'how long past its deadline a lease may be before it counts as not reaped',
      integerOption(0, 3_600_000),
      5_000,
    )
    .option('--ids <count>', 'ids listed per finding', integerOption(1, 1_000), 10)
    .action(
      act(state, async ({ queues, out }, queue: string | undefined, flags: DoctorFlags) => {
        if (queue !== undefined) await requireKnownQueue(queues, queue);
        const names = queue === undefined ? await queues.listQueues() : [queue];
        const report = await runDoctor(
          names.map((name) => queues.context(name)),
          { repair: flags.repair === true, leaseGraceMs: flags.grace, idsShown: flags.ids },
        );
        out.result(report, () => render(out, report));
        return report.healthy ? 0 : 1;
      }),
    );
}
