import { Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DiscoveryService } from '@nestjs/core';
import {
  defineQueue,
  EchoMqModule,
  ModuleImportedTwiceError,
  Processor,
  QueueService,
  type Job,
} from '@app/echomq';
import { ProcessorExplorer, RedisConnections } from '@app/echomq/internal';
import { once } from 'node:events';
import { redisUrl, uniqueQueue } from '../support/redis';

const root = (): ReturnType<typeof EchoMqModule.forRoot> =>
  EchoMqModule.forRoot({ connection: { url: redisUrl() } });

const apps: INestApplication[] = [];

afterEach(async () => {
  while (apps.length > 0) await apps.pop()!.close();
});

async function init(imports: unknown[], providers: unknown[] = []): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: imports as never[],
    providers: providers as never[],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  apps.push(app);
  return app;
}

describe('one EchoMqModule root per application', () => {
  it('refuses a second forRoot in a feature module at boot, naming the fix', async () => {
    @Processor(uniqueQueue('twice'))
    class Worker {
      process(): void {}
    }
    @Module({ imports: [root()], providers: [Worker] })
    class FeatureModule {}

    const moduleRef = await Test.createTestingModule({ imports: [root(), FeatureModule] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    const booting = app.init();
    await expect(booting).rejects.toBeInstanceOf(ModuleImportedTwiceError);
    await expect(booting).rejects.toMatchObject({ code: 'MODULE_IMPORTED_TWICE', imports: 2 });
    await expect(booting).rejects.toThrow(/forFeature/);
    // Both roots' connections are closed: nothing keeps a process that handles the error alive.
    const clients = app
      .get(DiscoveryService)
      .getProviders()
      .map((wrapper) => wrapper.instance as unknown)
      .filter((instance): instance is RedisConnections => instance instanceof RedisConnections)
      .map((connections) => connections.client);
    expect(clients).toHaveLength(2);
    for (const client of clients) if (client.status !== 'end') await once(client, 'end');
    expect(clients.map((client) => client.status)).toEqual(['end', 'end']);
  });

  it('refuses forRoot next to forRootAsync', async () => {
    const asyncRoot = EchoMqModule.forRootAsync({ useFactory: () => ({ connection: { url: redisUrl() } }) });
    await expect(init([root(), asyncRoot])).rejects.toBeInstanceOf(ModuleImportedTwiceError);
  });

  it('feature modules share the one root: every processor is served once', async () => {
    const Emails = defineQueue<{ n: number }, number>(uniqueQueue('feature'));
    let calls = 0;

    @Processor(Emails)
    class EmailProcessor {
      process(job: Job<{ n: number }>): number {
        calls++;
        return job.data.n;
      }
    }
    @Module({ imports: [EchoMqModule.forFeature([Emails])], providers: [EmailProcessor] })
    class EmailModule {}
    @Module({ imports: [EchoMqModule.forFeature([Emails])] })
    class ReportingModule {}

    const app = await init([root(), EmailModule, ReportingModule]);
    const explorers = app
      .get(DiscoveryService)
      .getProviders()
      .filter((wrapper) => wrapper.metatype === ProcessorExplorer);
    expect(explorers).toHaveLength(1);
    const handle = app.get(QueueService).queue(Emails);
    const id = await handle.enqueue({ n: 3 });
    await expect(handle.waitFor(id, 10_000)).resolves.toBe(3);
    expect(calls).toBe(1);
  });
});
