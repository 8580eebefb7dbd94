import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { RedisConnections } from '../connection/redis-connections';
import { InvalidArgumentError } from '../errors';
import { ProcessorExplorer } from '../worker/processor-explorer';
import { judgeLoops, type LoopDetail } from './loop-verdict';
import { probeRedis } from './redis-probe';

/** A probe must answer fast: a Redis that takes longer than this to PONG counts as down. */
export const PING_TIMEOUT_MS = 1_000;
/** How far past its own bound a claim loop's step may run before the loop counts as stuck. */
export const STUCK_MARGIN_MS = 5_000;

export interface EchoMqHealthOptions {
  /** How long the PING may take: 10 to 60,000 ms. Default PING_TIMEOUT_MS (1 s). */
  readonly pingTimeoutMs?: number;
  /** How far past its bound a loop's step may run: 0 to 3,600,000 ms. Default STUCK_MARGIN_MS (5 s). */
  readonly stuckMarginMs?: number;
}

/** What the indicator adds to its key in the health result. */
export interface EchoMqHealthDetails extends Record<string, unknown> {
  readonly redis: { readonly target: string; readonly reachable: boolean };
  /** Every processor's claim loop in this application, by queue (none in a producer-only one). */
  readonly loops: Record<string, LoopDetail>;
  /** When down: every problem found, in one sentence each, `; ` between. */
  readonly message?: string;
}

function checked(
  value: number | undefined,
  name: string,
  min: number,
  max: number,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

/**
 * A @nestjs/terminus health indicator for EchoMQ in this application: up when Redis answers a
 * PING through EchoMQ's own connection and every claim loop that should be claiming is alive and
 * not stuck (see judgeLoops); down otherwise, with each problem in `message` and every loop's
 * state, step and bound in `loops`. Provide it beside TerminusModule and call it in a check:
 * `this.health.check([() => this.echomq.isHealthy('echomq')])` (docs/operations.md).
 */
@Injectable()
export class EchoMqHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly connections: RedisConnections,
    private readonly explorer: ProcessorExplorer,
  ) {}

  /** `key` names the result in the health check's body, e.g. 'echomq'. */
  async isHealthy<const Key extends string>(
    key: Key,
    options: EchoMqHealthOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const pingTimeoutMs = checked(options.pingTimeoutMs, 'pingTimeoutMs', 10, 60_000, PING_TIMEOUT_MS);
    const marginMs = checked(options.stuckMarginMs, 'stuckMarginMs', 0, 3_600_000, STUCK_MARGIN_MS);
    const indicator = this.health.check(key);
    const redis = await probeRedis(this.connections, pingTimeoutMs);
    const { loops, problems } = judgeLoops(this.explorer.loopReports(), marginMs);
    if (!redis.reachable) problems.unshift(redis.message);
    const details: EchoMqHealthDetails = {
      redis: { target: redis.target, reachable: redis.reachable },
      loops,
    };
    if (problems.length === 0) return indicator.up(details);
    return indicator.down({ ...details, message: problems.join('; ') });
  }
}
