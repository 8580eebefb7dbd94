import { EchoMqError } from '../errors';
import type { QueueService } from '../queue/queue.service';

/** Queues listed in the message of an unknown queue, at most. */
const LISTED_MAX = 10;

/** A queue the command line was asked about that the registry does not name and that holds nothing. */
export class UnknownQueueError extends EchoMqError {
  constructor(
    readonly queue: string,
    readonly prefix: string,
    readonly known: readonly string[],
  ) {
    const listed = known.slice(0, LISTED_MAX).join(', ');
    const more = known.length > LISTED_MAX ? `, and ${known.length - LISTED_MAX} more` : '';
    super(
      'UNKNOWN_QUEUE',
      `Queue '${queue}' is not known under key prefix '${prefix}': it is not in the registry and holds ` +
        `no jobs (${known.length === 0 ? 'no queue is known; check --url and --prefix' : `known: ${listed}${more}`})`,
    );
  }
}

/**
 * Refuses a queue name that is valid but names nothing, so a typo is not read as an empty queue
 * (or paused as a new one). A queue is known when the registry names it or it holds jobs or a
 * pause: the reapers drop idle queues from the registry, so an old paused queue still counts.
 * @throws InvalidQueueNameError before anything is sent; UnknownQueueError.
 */
export async function requireKnownQueue(queues: QueueService, queue: string): Promise<void> {
  queues.context(queue); // validates the name before anything is sent
  const known = await queues.listQueues();
  if (known.includes(queue)) return;
  const counts = await queues.counts(queue);
  const jobs = counts.pending + counts.active + counts.schedule + counts.dead;
  if (jobs > 0 || (await queues.isPaused(queue))) return;
  throw new UnknownQueueError(queue, queues.settings.keyPrefix, known);
}
