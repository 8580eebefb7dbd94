import type { INestApplication } from '@nestjs/common';
import { ProcessorExplorer, type JobId, type QueueService } from '@app/echomq/internal';

/** Resolves once the claim loops of `queue` in `apps` have completed `count` jobs between them (listens from now on). */
export function completionsAcross(
  apps: readonly INestApplication[],
  queue: string,
  count: number,
): Promise<void> {
  return new Promise((resolve) => {
    let done = 0;
    for (const app of apps) {
      app
        .get(ProcessorExplorer)
        .requireLoop(queue)
        .events.on('completed', () => {
          if (++done === count) resolve();
        });
    }
  });
}

/** Enqueues jobs `{ n: 0 }` to `{ n: count - 1 }`, one call each (so they spread over the partitions); their ids in order. */
export async function enqueueNumbered(queues: QueueService, queue: string, count: number): Promise<JobId[]> {
  const ids: JobId[] = [];
  for (let n = 0; n < count; n++) ids.push(await queues.enqueue(queue, { n }));
  return ids;
}
