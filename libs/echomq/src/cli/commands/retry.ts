import type { Command } from 'commander';
import { plural } from '../format';
import { requireKnownQueue } from '../known-queue';
import { act, type RunState } from '../session';

export interface RetryResult {
  readonly queue: string;
  /** How many jobs went from dead to pending. */
  readonly retried: number;
  /** The job retried, when one was named. */
  readonly id?: string;
}

/** `emq retry <queue> <id>` or `emq retry <queue> --all-dead`: dead -> pending with a fresh retry budget. */
export function retryCommand(program: Command, state: RunState): void {
  program
    .command('retry')
    .description(
      'move a dead job (or, with --all-dead, every dead job) back to pending with a fresh retry budget',
    )
    .argument('<queue>', 'a queue name')
    .argument('[id]', 'a dead job')
    .option('--all-dead', 'every job in dead, oldest first')
    .hook('preAction', (command) => {
      const named = command.args[1] !== undefined;
      if (named === (command.opts<{ allDead?: boolean }>().allDead === true)) {
        usage(command, 'retry takes a job id or --all-dead (one of the two)');
      }
    })
    .action(
      act(state, async ({ queues, out }, queue: string, id: string | undefined) => {
        await requireKnownQueue(queues, queue);
        let result: RetryResult;
        if (id !== undefined) {
          await queues.retry(queue, id);
          result = { queue, retried: 1, id };
        } else {
          result = { queue, retried: await queues.retryAll(queue) };
        }
        out.result(result, () =>
          result.id
            ? `Retried ${result.id}: dead -> pending.`
            : `Retried ${plural(result.retried, 'dead job')}.`,
        );
      }),
    );
}

/** A usage error in commander's way: one line on stderr, exit 2. */
export function usage(command: Command, message: string): never {
  return command.error(`error: ${message}`, { code: 'emq.usage', exitCode: 2 });
}
