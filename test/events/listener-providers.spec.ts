import type { INestApplication } from '@nestjs/common';
import { OnQueueEvent, Processor, QueueEventsListener, QueueService, type CompletedEvent } from '@app/echomq';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { closeAll, DeferredMap } from '../worker/fixtures/support';

/**
 * A listener class provided the other ways Nest allows (an alias, a factory): its class is
 * the instance's own, and an alias, being the same instance, is subscribed once.
 */
const apps: INestApplication[] = [];
afterEach(async () => {
  await closeAll(apps.splice(0));
});

function classesFor(queue: string) {
  @Processor(queue)
  class Worker {
    process(): string {
      return 'done';
    }
  }

  @QueueEventsListener(queue)
  class Completions {
    readonly heard = new DeferredMap<number>();
    readonly calls = new Map<string, number>();

    @OnQueueEvent('completed')
    completed(event: CompletedEvent): void {
      for (const id of event.ids) {
        const calls = (this.calls.get(id) ?? 0) + 1;
        this.calls.set(id, calls);
        this.heard.get(id).resolve(calls);
      }
    }
  }
  return { Worker, Completions };
}

describe('listener classes given as aliases and factories', () => {
  it('a useExisting alias boots and its handlers are called once per event', async () => {
    const queue = uniqueQueue('alias');
    const { Worker, Completions } = classesFor(queue);
    const app = await bootApp([Worker, Completions, { provide: 'EVENTS', useExisting: Completions }]);
    apps.push(app);
    const id = await app.get(QueueService).enqueue(queue, 1);
    await app.get(QueueService).waitFor(queue, id, 10_000);
    const listener = app.get(Completions);
    await expect(listener.heard.get(id).promise).resolves.toBe(1);
    // A later event of another job comes after this one's: by then a second call would have come too.
    const next = await app.get(QueueService).enqueue(queue, 2);
    await listener.heard.get(next).promise;
    expect(listener.calls.get(id)).toBe(1);
  });

  it('a useFactory provider of a listener class boots and hears events', async () => {
    const queue = uniqueQueue('factory');
    const { Worker, Completions } = classesFor(queue);
    const app = await bootApp([Worker, { provide: Completions, useFactory: () => new Completions() }]);
    apps.push(app);
    const id = await app.get(QueueService).enqueue(queue, 1);
    await expect(app.get(Completions).heard.get(id).promise).resolves.toBe(1);
  });
});
