import type { NestExpressApplication } from '@nestjs/platform-express';
import helmet from 'helmet';
import { ApiConfig } from './config/api-config';
import { setupDocs } from './docs/swagger';
import { StrictValidationPipe } from './validation/strict-validation.pipe';

/**
 * Everything that turns the module into the served api, in one function that main and
 * the tests both call, so the tests exercise exactly what production runs.
 */
export function configureApp(app: NestExpressApplication): NestExpressApplication {
  const config = app.get(ApiConfig);
  // Behind a proxy that ends TLS, its X-Forwarded-Proto decides whether the dashboard's cookie
  // is Secure (and X-Forwarded-For which client the throttle counts); only when configured.
  if (config.trustProxyHops > 0) app.set('trust proxy', config.trustProxyHops);
  // Helmet's defaults, except upgrade-insecure-requests: the api speaks plain HTTP (TLS, if
  // any, ends at a proxy), and upgrading would break the /docs assets served over http://.
  app.use(helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } }));
  // JSON only, capped: a larger body is a 413 before anything is parsed into memory.
  app.useBodyParser('json', { limit: config.bodyLimitBytes });
  app.useGlobalPipes(new StrictValidationPipe());
  app.enableShutdownHooks();
  setupDocs(app);
  return app;
}
