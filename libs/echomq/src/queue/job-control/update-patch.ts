import type { StandardSchemaV1 } from '@standard-schema/spec';
import { describeValue, InvalidArgumentError, JobDataInvalidError } from '../../errors';
import { assertLaneName, assertPriority } from '../../keyspace';
import type { JobUpdateRecord } from '../../scripts/update-job';
import { serialisePayload } from '../enqueue-options';
import { checkWithSchema } from '../schema-check';
import { integerIn, optionsOf } from './control-arguments';

/** What update changes of a job that is not active; a field left out is kept. */
export interface JobPatch {
  /** The new payload (JSON); checked like an enqueue's: size limit, the queue's data schema. */
  readonly data?: unknown;
  /** Run no earlier than this instant; wins over delayMs. At or before now: pending now. */
  readonly runAt?: Date | number;
  /** Run this many ms from now (server clock); 0 makes a scheduled job pending now. */
  readonly delayMs?: number;
  /** 0 to 9, higher claimed first. */
  readonly priority?: number;
  /** The lane the job waits in. */
  readonly lane?: string;
}

const PATCH_KEYS = ['data', 'runAt', 'delayMs', 'priority', 'lane'] as const;
/** The latest instant a run-at may name (the end of year 9999), as enqueue's api accepts. */
const RUN_AT_MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * Checks a patch and builds what the update script takes; throws before anything is sent
 * (InvalidArgumentError, PayloadTooLargeError, JobDataInvalidError). An empty patch is refused:
 * it would change nothing, and is most likely a mistake.
 */
export async function buildJobUpdate(
  queue: string,
  patch: JobPatch,
  payloadLimitBytes: number,
  schema: StandardSchemaV1<unknown, unknown> | undefined,
): Promise<JobUpdateRecord> {
  const given = optionsOf(patch, PATCH_KEYS, 'the update');
  const present = PATCH_KEYS.filter((key) => given[key] !== undefined);
  if (present.length === 0) {
    throw new InvalidArgumentError(
      `the update names nothing to change: give one of ${PATCH_KEYS.join(', ')}`,
    );
  }
  const update: { -readonly [K in keyof JobUpdateRecord]: JobUpdateRecord[K] } = {};
  if (given.data !== undefined) {
    if (schema) {
      const result = await checkWithSchema(schema, given.data);
      if (!result.ok) throw new JobDataInvalidError(queue, result.issues);
    }
    update.data = serialisePayload(given.data, payloadLimitBytes);
  }
  if (given.runAt !== undefined) {
    const ms = given.runAt instanceof Date ? given.runAt.getTime() : given.runAt;
    if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0 || ms > RUN_AT_MAX_MS) {
      throw new InvalidArgumentError(
        `runAt must be a valid date or epoch ms, got ${describeValue(given.runAt)}`,
      );
    }
    update.runAtMs = ms;
  } else if (given.delayMs !== undefined) {
    update.delayMs = integerIn(given.delayMs, 'delayMs', 0, RUN_AT_MAX_MS);
  }
  if (given.lane !== undefined) update.lane = assertLaneName(given.lane);
  if (given.priority !== undefined) update.priority = assertPriority(given.priority);
  return update;
}
