import { queueHasKeys } from '../doctor/key-scan';
import { EchoMqError } from '../errors';
import type { QueueService } from '../queue/queue.service';

/** Queues listed in the message of an unknown queue, at most. */
const LISTED_MAX = 10;

/** A queue the command line was asked about of which nothing is stored. */
export class UnknownQueueError extends EchoMqError {
  constructor(
    readonly queue: string,
    readonly prefix: string,
    readonly known: readonly string[],
    /** Whether every key was looked for (the doctor's form), not only the queue's usual ones. */
    readonly scanned = false,
  ) {
    const listed = known.slice(0, LISTED_MAX).join(', ');
    const more = known.length > LISTED_MAX ? `, and ${known.length - LISTED_MAX} more` : '';
    const looked = scanned
      ? `it is not in the registry and no key under '${prefix}:{${queue}}:' exists`
      : 'it is not in the registry and has no format key, no jobs and no pause';
    super(
      'UNKNOWN_QUEUE',
      `Queue '${queue}' is not known under key prefix '${prefix}': ${looked} ` +
        `(${known.length === 0 ? 'no queue is registered; check --url and --prefix' : `registered: ${listed}${more}`})`,
    );
  }
}

/**
 * Refuses a queue name that is valid but names nothing, so a typo is not read as an empty queue
 * (or paused as a new one). A queue is known when the registry names it, its format key exists
 * (every queue records its format on first use; only obliterate removes it), the partitions
 * registry records it (a partitioned queue: its partitions have the format keys), or it holds
 * jobs or a pause: the reapers drop idle queues from the registry. A partition may be named by
 * its own name (`emails#2`), known by the same rules. With `anyKey` (the doctor, whose job is
 * queues whose keys are broken) any key under the queue's base counts too, found by a SCAN that
 * stops at the first one: one walk of the keyspace when there is none.
 * @throws InvalidQueueNameError before anything is sent; UnknownQueueError.
 */
export async function requireKnownQueue(
  queues: QueueService,
  queue: string,
  { anyKey = false }: { anyKey?: boolean } = {},
): Promise<void> {
  const ctx = queues.context(queue); // validates the name before anything is sent
  const known = await queues.listQueues();
  if (known.includes(queue) || (await ctx.redis.exists(ctx.keys.format)) === 1) return;
  if ((await queues.partitionLayout(queue)).partitioned) return;
  const counts = await queues.counts(queue);
  const jobs = counts.pending + counts.active + counts.schedule + counts.dead;
  if (jobs > 0 || (await queues.isPaused(queue))) return;
  if (anyKey && (await queueHasKeys(ctx.redis, ctx.keys))) return;
  throw new UnknownQueueError(queue, queues.settings.keyPrefix, known, anyKey);
}
