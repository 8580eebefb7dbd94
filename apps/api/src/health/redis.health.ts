import { RedisConnections } from '@app/echomq/internal';
import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';

/** A probe must answer fast: a Redis that takes longer than this to PONG counts as down. */
export const REDIS_PING_TIMEOUT_MS = 1_000;

/**
 * Is Redis reachable through the very connection the api uses? PINGs through the
 * library's RedisConnections.client, which holds a command while it (re)connects: a PING
 * that has no PONG within REDIS_PING_TIMEOUT_MS, connecting or not, reports down.
 */
@Injectable()
export class RedisHealthIndicator {
  constructor(
    private readonly connections: RedisConnections,
    private readonly health: HealthIndicatorService,
  ) {}

  async isHealthy(key: string): Promise<HealthIndicatorResult> {
    const indicator = this.health.check(key);
    const client = this.connections.client;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`No PONG within ${REDIS_PING_TIMEOUT_MS} ms`)),
        REDIS_PING_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([client.ping(), timeout]);
      return indicator.up();
    } catch (error) {
      return indicator.down({ message: (error as Error).message });
    } finally {
      clearTimeout(timer);
    }
  }
}
