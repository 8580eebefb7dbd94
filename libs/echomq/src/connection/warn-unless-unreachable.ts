import type { LoggerService } from '@nestjs/common';
import { RedisUnavailableError } from '../errors';

/**
 * Logs a loop's failed call as a warning, unless it failed only because Redis is
 * unreachable: the connection says that once for the whole outage (reachability.ts), and
 * a claim loop, a reaper and an event reader each repeating it every second would bury it.
 */
export function warnUnlessUnreachable(logger: LoggerService, error: unknown, message: string): void {
  if (error instanceof RedisUnavailableError) logger.debug?.(message);
  else logger.warn(message);
}
