import { assertQueueName } from '@app/echomq/internal';
import { Injectable, type PipeTransform } from '@nestjs/common';

/**
 * Gates the :queue path parameter with the keyspace's own rule before any handler
 * runs, so a bad name is a 400 (InvalidQueueNameError) and never reaches Redis.
 * Only a queue's own name passes, never one partition's (`emails#2`): over HTTP a
 * partitioned queue is one queue, its reads summed and merged and its writes routed by
 * QueueService, and an enqueue into one partition would skip that routing (a lane or
 * idempotency key would land outside its partition). Partitions are for the operator's
 * tools, `emq stats` and `emq doctor`, which take them by name.
 */
@Injectable()
export class QueueNamePipe implements PipeTransform<unknown, string> {
  transform(value: unknown): string {
    return assertQueueName(value);
  }
}
