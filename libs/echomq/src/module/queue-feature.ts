import { Inject, Module, type DynamicModule, type FactoryProvider } from '@nestjs/common';
import { QueueService } from '../queue/queue.service';
import { defineQueue, queueNameOf, type QueueDefinition, type QueueRef } from '../queue/queue-definition';
import type { QueueHandle } from '../queue/queue-handle';

/** The injection token of a queue's typed handle. */
export function queueToken(queue: QueueRef): string {
  return `EchoMqQueue:${queueNameOf(queue)}`;
}

/**
 * Injects the typed handle of a queue registered with EchoMqModule.forFeature():
 * `@InjectQueue(Emails) private readonly emails: QueueHandle<typeof Emails>`.
 */
export function InjectQueue(queue: QueueRef): ParameterDecorator & PropertyDecorator {
  return Inject(queueToken(queue));
}

/** Holds the handles of one forFeature() call; QueueService comes from the (global) root module. */
@Module({})
export class EchoMqFeatureModule {
  static register(queues: readonly QueueRef[]): DynamicModule {
    const providers = queues.map((queue): FactoryProvider<QueueHandle<QueueDefinition>> => {
      const definition = typeof queue === 'string' ? defineQueue(queue) : queue;
      return {
        provide: queueToken(definition),
        inject: [QueueService],
        useFactory: (service: QueueService) => service.queue(definition),
      };
    });
    return { module: EchoMqFeatureModule, providers, exports: providers.map((provider) => provider.provide) };
  }
}
