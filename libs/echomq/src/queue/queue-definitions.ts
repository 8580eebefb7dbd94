import { InvalidArgumentError } from '../errors';
import { queueNameOf, type QueueDefinition } from './queue-definition';

/**
 * The typed definitions one application declared (forFeature, @Processor, QueueService.queue),
 * by queue name, so a data schema applies at enqueue whether the queue is named by its handle
 * or by a plain string. One name may be declared by several modules with the same definition;
 * two definitions with different schemas would make the check depend on import order, so
 * the second is refused.
 */
export class QueueDefinitions {
  private readonly byName = new Map<string, QueueDefinition>();

  use(definition: QueueDefinition<unknown, unknown>): void {
    const name = queueNameOf(definition);
    const known = this.byName.get(name);
    if (known === undefined || known === definition) {
      this.byName.set(name, definition);
      return;
    }
    const sameSchemas =
      known.schemas.data === definition.schemas.data && known.schemas.result === definition.schemas.result;
    if (!sameSchemas) {
      throw new InvalidArgumentError(
        `Queue '${name}' is defined twice with different schemas; export one defineQueue('${name}', ...) and import it everywhere`,
      );
    }
  }

  get(queue: string): QueueDefinition | undefined {
    return this.byName.get(queue);
  }
}
