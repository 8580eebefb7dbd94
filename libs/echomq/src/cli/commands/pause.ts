import type { Command } from 'commander';
import { requireKnownQueue } from '../known-queue';
import { act, type RunState } from '../session';

export interface PauseResult {
  readonly queue: string;
  /** The lane paused or resumed; null for the whole queue. */
  readonly lane: string | null;
  readonly paused: boolean;
}

/**
 * `emq pause|resume <queue> [--lane <lane>]`: workers stop (or start again) claiming from the
 * queue, or from one lane of it; enqueue goes on, and active jobs run to their end.
 */
export function pauseCommands(program: Command, state: RunState): void {
  for (const paused of [true, false]) {
    const verb = paused ? 'pause' : 'resume';
    program
      .command(verb)
      .description(
        paused
          ? 'stop workers claiming from the queue (or one lane); enqueue goes on, active jobs finish'
          : 'let workers claim from the queue (or one lane) again',
      )
      .argument('<queue>', 'a queue name')
      .option('--lane <lane>', `${verb} this lane only`)
      .action(
        act(state, async ({ queues, out }, queue: string, flags: { lane?: string }) => {
          await requireKnownQueue(queues, queue);
          const lane = flags.lane ?? null;
          if (lane === null) await (paused ? queues.pause(queue) : queues.resume(queue));
          else await (paused ? queues.pauseLane(queue, lane) : queues.resumeLane(queue, lane));
          const result: PauseResult = { queue, lane, paused };
          const what = lane === null ? `Queue ${queue}` : `Lane ${lane} of queue ${queue}`;
          out.result(result, () => `${what}: ${paused ? 'paused' : 'resumed'}.`);
        }),
      );
  }
}
