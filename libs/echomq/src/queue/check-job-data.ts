import type { StandardSchemaV1 } from '@standard-schema/spec';
import { JobDataInvalidError } from '../errors';
import type { JobToEnqueue } from './enqueue-options';
import { checkWithSchema } from './schema-check';

/**
 * Checks every job's data against its queue's schema before anything is sent, and returns
 * the jobs with the schema's output as their data (what the handler will be given). The
 * first refused job stops the whole call, so a batch is still all or nothing.
 */
export async function checkJobData<T>(
  queue: string,
  schema: StandardSchemaV1<unknown, unknown>,
  jobs: readonly JobToEnqueue<T>[],
): Promise<JobToEnqueue<T>[]> {
  const checked: JobToEnqueue<T>[] = [];
  for (const [index, job] of jobs.entries()) {
    const result = await checkWithSchema(schema, job.data);
    if (!result.ok) throw new JobDataInvalidError(queue, result.issues, jobs.length > 1 ? index : undefined);
    checked.push({ ...job, data: result.value as T });
  }
  return checked;
}
