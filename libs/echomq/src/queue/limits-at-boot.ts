import type { LoggerService } from '@nestjs/common';
import { warnUnlessUnreachable } from '../connection/warn-unless-unreachable';
import type { EchoMqModuleOptions } from '../module/echomq-options';
import type { FlowLimits } from '../scripts/set-limits';
import { configuredLimits } from './flow-limits';

/**
 * The queues whose shared limits a process writes at application bootstrap: each
 * `queues.<name>` entry that configures one (with the module defaults). Written then, and
 * not at the queue's first enqueue, so that an admin's setLimits made before that enqueue is
 * not undone by it. A queue a @Processor of this application serves is left out: the processor
 * explorer registers it at the same moment, and stops the boot if it must not serve it. A queue
 * that only the module defaults give limits to is not known by name, so its first use writes them.
 */
export function queuesWithConfiguredLimits(
  options: Pick<EchoMqModuleOptions, 'defaults' | 'queues'>,
  servedHere: (queue: string) => boolean,
): string[] {
  return Object.entries(options.queues ?? {})
    .filter(([queue, own]) => !servedHere(queue) && hasAny(configuredLimits(options.defaults, own)))
    .map(([queue]) => queue);
}

function hasAny(limits: Partial<FlowLimits>): boolean {
  return Object.keys(limits).length > 0;
}

/**
 * Registers each of these queues (which writes its configured limits), all at once. A producer
 * does not stop booting when one fails (Redis down, a data format it does not know): it says
 * so, and the queue's first enqueue registers it again, failing with the same error if it lasts.
 * A full Redis fails none of them: the registration warns once and writes the limits itself as
 * soon as there is room (QueueRegistration), not at a later first enqueue, so the boot write
 * still comes before an admin's setLimits made after it.
 */
export async function registerAtBoot(
  queues: readonly string[],
  register: (queue: string) => Promise<void>,
  logger: LoggerService,
): Promise<void> {
  await Promise.all(
    queues.map(async (queue) => {
      try {
        await register(queue);
      } catch (error) {
        warnUnlessUnreachable(
          logger,
          error,
          `Queue ${queue}: the limits configured for it were not written at boot (${(error as Error).message}); ` +
            'its first enqueue tries again',
        );
      }
    }),
  );
}
