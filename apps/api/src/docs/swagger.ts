import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

export const DOCS_PATH = 'docs';

/**
 * The OpenAPI document, generated from the controllers' decorators, served as a UI
 * at /docs and as JSON at /docs-json. Both stay open: the routes they describe do not.
 */
export function setupDocs(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('EchoMQ')
    .setDescription(
      'Enqueue and inspect jobs of EchoMQ, a reliable Redis job queue. ' +
        'When the server sets EMQ_API_TOKEN, /queues routes need a bearer token.',
    )
    .setVersion('0.1.0')
    .addBearerAuth()
    .build();
  const document = SwaggerModule.createDocument(app, config);
  SwaggerModule.setup(DOCS_PATH, app, document, { jsonDocumentUrl: `${DOCS_PATH}-json` });
}
