import type { StandardSchemaV1 } from '@standard-schema/spec';
import { JobDataInvalidError } from '../errors';
import type { JobToEnqueue } from './enqueue-options';
import { checkWithSchema } from './schema-check';

/**
 * Checks every job's data against its queue's schema before anything is sent. The data is
 * stored as given, not as the schema's output: the claim parses it again and hands the
 * handler the output, and a transforming schema (string → number, say) would refuse its
 * own output. The first refused job stops the whole call, so a batch stays all or nothing.
 */
export async function checkJobData<T>(
  queue: string,
  schema: StandardSchemaV1<unknown, unknown>,
  jobs: readonly JobToEnqueue<T>[],
): Promise<void> {
  for (const [index, job] of jobs.entries()) {
    const result = await checkWithSchema(schema, job.data);
    if (!result.ok) throw new JobDataInvalidError(queue, result.issues, jobs.length > 1 ? index : undefined);
  }
}
