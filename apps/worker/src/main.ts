import 'reflect-metadata';
import { ConsoleLogger, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { exitWhenALoopEnds } from './exit-on-loop-end';
import { readWorkerConfig } from './worker-config';
import { WorkerModule } from './worker.module';

/**
 * The worker host: a Nest application context (no HTTP) whose processors are
 * discovered and served by EchoMqModule. SIGTERM / SIGINT drain it gracefully:
 * in-flight jobs get the grace period, the rest go back to pending. A claim loop that an error
 * ends makes it drain the same way and exit 1, for its supervisor to restart it.
 */
async function bootstrap(): Promise<void> {
  const json = process.env.EMQ_LOG_FORMAT !== 'text';
  const logger = new ConsoleLogger({ json, prefix: 'echomq-worker' });
  let config;
  try {
    config = readWorkerConfig();
  } catch (error) {
    logger.error((error as Error).message);
    process.exit(1);
  }
  const app = await NestFactory.createApplicationContext(WorkerModule.forConfig(config), { logger });
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  // Told at once of a loop that ended already: the loops started inside createApplicationContext.
  exitWhenALoopEnds(app, config.shutdownGraceMs);
  await app.init();
  new Logger('Worker').log(`Worker started (demo concurrency ${config.demoConcurrency})`);
}

bootstrap().catch((error: unknown) => {
  // E.g. EMQ_METRICS_PORT already taken: say so on one line, not as an unhandled rejection.
  console.error(`EchoMQ worker failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
