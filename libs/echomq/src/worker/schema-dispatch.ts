import { JobDataInvalidError, JobResultInvalidError } from '../errors';
import type { QueueDefinition } from '../queue/queue-definition';
import { checkWithSchema } from '../queue/schema-check';
import type { Job } from './job';

/**
 * Wraps a processor's dispatch with its queue's schemas. The data is checked again at
 * claim because a job may predate the schema or come from a producer that does not know
 * it; the handler is given the schema's output. A refused payload or result sends the job
 * to dead (both errors are unrecoverable: a retry would meet the same data).
 */
export function withSchemas(
  definition: QueueDefinition,
  dispatch: (job: Job) => unknown,
): (job: Job) => Promise<unknown> {
  const { data: dataSchema, result: resultSchema } = definition.schemas;
  return async (job) => {
    if (dataSchema) {
      const checked = await checkWithSchema(dataSchema, job.data);
      if (!checked.ok) throw new JobDataInvalidError(definition.name, checked.issues);
      // The handler sees what the schema made of the data (defaults, coercions), as at enqueue.
      Object.defineProperty(job, 'data', { value: checked.value, enumerable: true });
    }
    const result = await dispatch(job);
    if (!resultSchema) return result;
    const checked = await checkWithSchema(resultSchema, result);
    if (!checked.ok) throw new JobResultInvalidError(definition.name, checked.issues);
    return checked.value;
  };
}
