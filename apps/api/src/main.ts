import { Logger } from '@nestjs/common';
import { ApiConfig } from './config/api-config';
import { DOCS_PATH } from './docs/swagger';
import { createApiApp } from './create-app';

async function bootstrap(): Promise<void> {
  const app = await createApiApp();
  const config = app.get(ApiConfig);
  await app.listen(config.port, config.host);
  const url = (await app.getUrl()).replace('[::1]', 'localhost');
  const logger = new Logger('EchoMQ api');
  logger.log(`Listening on ${url} (bound to ${config.host}:${config.port})`);
  logger.log(`Docs at ${url}/${DOCS_PATH} (OpenAPI JSON at ${url}/${DOCS_PATH}-json)`);
  if (config.apiToken === undefined) {
    logger.warn('EMQ_API_TOKEN is not set: /queues routes are open to anyone who can reach this port');
  }
}

bootstrap().catch((error: unknown) => {
  // A bad environment lands here with a message naming the variable.
  console.error(`EchoMQ api failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
