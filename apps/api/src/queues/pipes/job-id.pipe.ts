import { assertJobId, type JobId } from '@app/echomq/internal';
import { Injectable, type PipeTransform } from '@nestjs/common';

/** Gates the :id path parameter with the branded-id rule: a malformed id is a 400, not a lookup. */
@Injectable()
export class JobIdPipe implements PipeTransform<unknown, JobId> {
  transform(value: unknown): JobId {
    return assertJobId(value);
  }
}
