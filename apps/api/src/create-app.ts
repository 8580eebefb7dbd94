import type { LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { configureApp } from './configure-app';
import type { RawEnvironment } from './config/environment';

export interface CreateApiAppOptions {
  /** Defaults to process.env. */
  readonly env?: RawEnvironment;
  readonly logger?: LoggerService | LogLevel[] | false;
}

/** Creates and configures the api (not yet listening). Rejects, naming the variable, on a bad environment. */
export async function createApiApp(options: CreateApiAppOptions = {}): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(options.env), {
    // configureApp installs the JSON parser with the configured limit instead of Nest's default.
    bodyParser: false,
    // Fail with the error (e.g. a bad environment variable) instead of process.abort().
    abortOnError: false,
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
  });
  return configureApp(app);
}
