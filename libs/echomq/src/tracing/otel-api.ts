import type * as OtelApiModule from '@opentelemetry/api';
import { InvalidOptionError } from '../errors';

/** The OpenTelemetry API as this package uses it (the application's own copy). */
export type OtelApi = typeof OtelApiModule;

/** Why `tracing: true` is refused when the API cannot be loaded. */
export const TRACING_NEEDS_API =
  'needs the package @opentelemetry/api (^1.3.0) installed next to EchoMQ: npm install @opentelemetry/api';

let loaded: OtelApi | null | undefined;

/**
 * The OpenTelemetry API, loaded on first use, or null when it is not installed. It is an
 * optional peer dependency: an application that does not trace need not install it, and one
 * that does shares its SDK's copy, whose global tracer provider and propagator EchoMQ then
 * uses (a second copy of the API could see none of them). Only called with tracing on.
 */
export function otelApi(): OtelApi | null {
  if (loaded === undefined) {
    try {
      // A require, not an import: the package must not be loaded (or needed) while tracing is off.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      loaded = require('@opentelemetry/api') as OtelApi;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
      loaded = null;
    }
  }
  return loaded;
}

/** The API, for a component that runs only with tracing on (the options check came first). */
export function requireOtelApi(): OtelApi {
  const api = otelApi();
  if (!api) throw new InvalidOptionError('tracing', TRACING_NEEDS_API);
  return api;
}
