import { InvalidArgumentError, InvalidQueueNameError } from '../errors';
import { PARTITION_TAGS } from '../ids';
import { isValidQueueName } from './queue-name';

/**
 * A partitioned queue `q` is PARTITIONS physical queues `q#0 … q#N-1`, each with its own
 * hashtag `{q#k}`, so they hash to different slots and spread over a cluster's masters
 * (docs/partitions.md). `#` is outside the queue-name alphabet, so a physical name never
 * collides with a queue's own name, and the logical name is everything before it.
 */
export const PARTITION_SEPARATOR = '#';

/** Most partitions one queue may have: as many as a job id can name (ids/snowflake.ts). */
export const MAX_PARTITIONS = PARTITION_TAGS;

/** A queue name, or a queue name with its partition index (`emails#3`), as the keyspace takes it. */
const PARTITION_SUFFIX = /^(.+)#(0|[1-9][0-9]?)$/;

export interface PhysicalQueue {
  /** The queue's own (logical) name. */
  readonly queue: string;
  /** The partition index; undefined for an unpartitioned queue (or a partitioned queue's jobs from before). */
  readonly partition?: number;
}

/** The physical queue name of partition `index` of `queue`. */
export function partitionQueueName(queue: string, index: number): string {
  if (!isValidQueueName(queue)) throw new InvalidQueueNameError(queue);
  if (!Number.isInteger(index) || index < 0 || index >= MAX_PARTITIONS) {
    throw new InvalidArgumentError(
      `A partition index is an integer from 0 to ${MAX_PARTITIONS - 1}, got ${index}`,
    );
  }
  return `${queue}${PARTITION_SEPARATOR}${index}`;
}

/** The queue and partition a physical name stands for; undefined when it is neither a queue name nor a partition's. */
export function parsePhysicalQueue(name: unknown): PhysicalQueue | undefined {
  if (typeof name !== 'string') return undefined;
  if (isValidQueueName(name)) return { queue: name };
  const match = PARTITION_SUFFIX.exec(name);
  if (!match || !isValidQueueName(match[1])) return undefined;
  const partition = Number(match[2]);
  return partition < MAX_PARTITIONS ? { queue: match[1], partition } : undefined;
}

/** Whether `name` is a queue name or one of a queue's partitions (what may stand inside a key's hashtag). */
export function isPhysicalQueueName(name: unknown): name is string {
  return parsePhysicalQueue(name) !== undefined;
}

/** The queue a physical name belongs to (itself for an unpartitioned queue). */
export function logicalQueueOf(name: string): string {
  return parsePhysicalQueue(name)?.queue ?? name;
}

/** Throws InvalidQueueNameError unless `name` is a queue name or a partition's; returns it. */
export function assertPhysicalQueueName(name: unknown): string {
  if (!isPhysicalQueueName(name)) throw new InvalidQueueNameError(name);
  return name;
}

/**
 * The fields of the partitions registry (`<p>:partitions`) that hold one queue's layout: the
 * count last declared, under the queue's own name, and the most it ever had, under `q#max`
 * (a name no queue can have). scripts/lua/record-partitions.lua.ts writes the same two.
 */
export function partitionRegistryFields(queue: string): { readonly count: string; readonly most: string } {
  if (!isValidQueueName(queue)) throw new InvalidQueueNameError(queue);
  return { count: queue, most: `${queue}${PARTITION_SEPARATOR}max` };
}
