import type { Command } from 'commander';
import type { RemovedFrom } from '../../scripts/remove';
import { requireKnownQueue } from '../known-queue';
import { act, type RunState } from '../session';

/** `emq remove <queue> <id>`: the job is gone, from whatever state; an active job's handler is aborted. */
export function removeCommand(program: Command, state: RunState): void {
  program
    .command('remove')
    .description("remove a job in any state (an active job's handler is aborted, wherever it runs)")
    .argument('<queue>', 'a queue name')
    .argument('<id>', 'a job id')
    .action(
      act(state, async ({ queues, out }, queue: string, id: string) => {
        await requireKnownQueue(queues, queue);
        const removedFrom: RemovedFrom = await queues.remove(queue, id);
        out.result({ queue, id, removedFrom }, () => `Removed ${id} (it was ${removedFrom}).`);
      }),
    );
}
