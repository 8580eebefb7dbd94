import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EchoMqModule, QueueService, type EchoMqConnection, type EchoMqModuleOptions } from '@app/echomq';

/**
 * The orchestrator's own view of the Redis under test, through the public surface: a
 * producer-only application (it claims nothing) whose QueueService reads counts and jobs.
 */
export interface Inspector {
  readonly queues: QueueService;
  close(): Promise<void>;
}

export async function openInspector(
  connection: EchoMqConnection,
  module: Partial<Omit<EchoMqModuleOptions, 'connection'>> = {},
): Promise<Inspector> {
  @Module({ imports: [EchoMqModule.forRoot({ ...module, connection, startProcessors: false })] })
  class InspectorModule {}
  const app: INestApplicationContext = await NestFactory.createApplicationContext(InspectorModule, {
    logger: ['error'],
  });
  await app.init();
  return { queues: app.get(QueueService), close: () => app.close() };
}
