import { assertQueueName } from '@app/echomq/internal';
import { Injectable, type PipeTransform } from '@nestjs/common';

/**
 * Gates the :queue path parameter with the keyspace's own rule before any handler
 * runs, so a bad name is a 400 (InvalidQueueNameError) and never reaches Redis.
 */
@Injectable()
export class QueueNamePipe implements PipeTransform<unknown, string> {
  transform(value: unknown): string {
    return assertQueueName(value);
  }
}
