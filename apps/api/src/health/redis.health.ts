import { RedisConnections } from '@app/echomq/internal';
import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';

/** A probe must answer fast: a Redis that takes longer than this to PONG counts as down. */
export const REDIS_PING_TIMEOUT_MS = 1_000;

/**
 * Is Redis reachable through the very connection the api uses? While the connection is
 * down and its last attempt failed (refused, reset, unresolvable), it reports down at once,
 * naming the target and that error. Otherwise (up, or still connecting at boot) it PINGs through
 * RedisConnections.client: a socket can look up and be dead, so a PING without a PONG
 * within REDIS_PING_TIMEOUT_MS reports down too.
 */
@Injectable()
export class RedisHealthIndicator {
  constructor(
    private readonly connections: RedisConnections,
    private readonly health: HealthIndicatorService,
  ) {}

  async isHealthy(key: string): Promise<HealthIndicatorResult> {
    const indicator = this.health.check(key);
    const { reachability } = this.connections;
    const unreachable = (): HealthIndicatorResult =>
      indicator.down({
        message: `Redis at ${reachability.target} is unreachable (${reachability.reason ?? 'not connected yet'})`,
      });
    if (!reachability.reachable && reachability.reason !== undefined) return unreachable();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`No PONG within ${REDIS_PING_TIMEOUT_MS} ms`)),
        REDIS_PING_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([this.connections.client.ping(), timeout]);
      return indicator.up();
    } catch (error) {
      if (!reachability.reachable) return unreachable();
      return indicator.down({ message: (error as Error).message });
    } finally {
      clearTimeout(timer);
    }
  }
}
