import { optionPath, refuse } from '../../option-checks';
import type { QueueOptions } from '../queue-options';

/**
 * Refuses shared limits that a partition count given with them cannot split: each partition
 * enforces its own share of globalConcurrency and rateLimit.max, of at least 1, so options
 * that declare `partitions: N` with either below N contradict themselves. `partitionsAt` names
 * where the count was given, `limitAt` where each limit was (docs/partitions.md).
 */
export function checkLimitsSplit(
  limits: Pick<QueueOptions, 'globalConcurrency' | 'rateLimit'>,
  partitions: number,
  partitionsAt: string,
  limitAt: (key: 'globalConcurrency' | 'rateLimit') => string,
): void {
  const given: [key: 'globalConcurrency' | 'rateLimit', value: number | undefined][] = [
    [
      'globalConcurrency',
      typeof limits.globalConcurrency === 'number' ? limits.globalConcurrency : undefined,
    ],
    ['rateLimit', limits.rateLimit ? limits.rateLimit.max : undefined],
  ];
  for (const [key, value] of given) {
    if (value === undefined || value >= partitions) continue;
    refuse(
      key === 'rateLimit' ? optionPath(limitAt(key), 'max') : limitAt(key),
      `is ${value}, below ${partitionsAt} ${partitions}: each partition enforces its own share of the ` +
        'limit, at least 1, so it must be at least the partition count',
    );
  }
}

type QueuesOption = Record<string, QueueOptions | undefined> | undefined;

/**
 * A queue whose partition count and shared limits come from different layers (module defaults
 * and `queues.<name>`) must be as splittable as one layer giving both (assertQueueOptions
 * checks each layer): refused at boot, naming the option where the limit was given, rather
 * than warned about at every registration.
 */
export function checkPartitionedLimits(defaults: QueueOptions | undefined, queues: QueuesOption): void {
  for (const [name, own] of Object.entries(queues ?? {})) {
    const partitions = own?.partitions ?? defaults?.partitions;
    if (partitions === undefined) continue;
    const at = optionPath('queues', name);
    const partitionsAt = own?.partitions !== undefined ? `${at}.partitions` : 'defaults.partitions';
    const layerOf = (key: 'globalConcurrency' | 'rateLimit'): string =>
      own?.[key] !== undefined ? at : 'defaults';
    checkLimitsSplit(
      {
        globalConcurrency:
          own?.globalConcurrency !== undefined ? own.globalConcurrency : defaults?.globalConcurrency,
        rateLimit: own?.rateLimit !== undefined ? own.rateLimit : defaults?.rateLimit,
      },
      partitions,
      `${partitionsAt} (of queue ${name})`,
      (key) => optionPath(layerOf(key), key),
    );
  }
}
