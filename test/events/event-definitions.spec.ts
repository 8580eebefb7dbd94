import { randomBytes } from 'node:crypto';
import { Injectable, Scope, type INestApplication, type Provider } from '@nestjs/common';
import type { Redis } from 'ioredis';
import {
  InvalidArgumentError,
  InvalidQueueNameError,
  OnQueueEvent,
  OnWorkerEvent,
  ProcessorDefinitionError,
  QueueEventsListener,
  type QueueEventType,
  type WorkerEventType,
} from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import { waitUntil } from '../worker/fixtures/support';

/** The error a boot fails with. An application that boots after all is closed, and the test fails. */
async function bootError(...args: Parameters<typeof bootApp>): Promise<Error> {
  let app: INestApplication;
  try {
    app = await bootApp(...args);
  } catch (error) {
    return error as Error;
  }
  await app.close();
  throw new Error('the application booted');
}

/** Every bad definition is a ProcessorDefinitionError whose message names the class. */
async function expectBootRefused(providers: Provider[], message: RegExp): Promise<void> {
  const error = await bootError(providers);
  expect(error).toBeInstanceOf(ProcessorDefinitionError);
  expect(error.message).toMatch(message);
}

describe('event decorators refuse definitions that could never be called', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('refuses an unknown event type or a bad queue name when the class is declared', () => {
    expect(() => OnQueueEvent('finished' as QueueEventType)).toThrow(InvalidArgumentError);
    expect(() => OnWorkerEvent('claimed' as WorkerEventType)).toThrow(InvalidArgumentError);
    expect(() => QueueEventsListener('no spaces allowed')).toThrow(InvalidQueueNameError);
  });

  it('fails the boot, and closes its connections, for @OnQueueEvent on a class that is not a listener', async () => {
    @Injectable()
    class Stray {
      @OnQueueEvent('completed')
      onCompleted(): void {}
    }
    const connectionName = `evdef-${randomBytes(4).toString('hex')}`;
    const error = await bootError([Stray], { connection: { url: redisUrl(), connectionName } });
    expect(error).toBeInstanceOf(ProcessorDefinitionError);
    expect(error.message).toMatch(/Stray has @OnQueueEvent methods but is not a @QueueEventsListener/);
    const ofApp = async (): Promise<number> =>
      ((await redis.client('LIST')) as string)
        .split('\n')
        .filter((line) => line.includes(` name=${connectionName} `)).length;
    await waitUntil(async () => (await ofApp()) === 0, 'the failed app closed its connections');
  });

  it('fails the boot for a listener with no @OnQueueEvent method', async () => {
    @QueueEventsListener(uniqueQueue('evdef'))
    class Silent {}
    await expectBootRefused([Silent], /Silent is a @QueueEventsListener\('.+'\) but has no @OnQueueEvent/);
  });

  it('fails the boot for a request-scoped listener', async () => {
    // Outermost, so its scope is the one Nest reads.
    @Injectable({ scope: Scope.REQUEST })
    @QueueEventsListener(uniqueQueue('evdef'))
    class PerRequest {
      @OnQueueEvent('completed')
      onCompleted(): void {}
    }
    await expectBootRefused([PerRequest], /PerRequest is request-scoped/);
  });

  it('fails the boot for @OnWorkerEvent on a class that is not a @Processor', async () => {
    @QueueEventsListener(uniqueQueue('evdef'))
    class Confused {
      @OnQueueEvent('completed')
      onCompleted(): void {}

      @OnWorkerEvent('completed')
      onMine(): void {}
    }
    await expectBootRefused(
      [Confused],
      /Confused.onMine has @OnWorkerEvent but Confused is not a @Processor/,
    );
  });
});
