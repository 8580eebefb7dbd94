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
  /**
   * Down when a handler has run longer than this: 1 to 604,800,000 ms (a week). Unset (the
   * default): handlers are not judged, only reported. A handler that never returns holds its
   * slot for good unless the queue has a `timeoutMs` (off by default).
   */
  readonly maxHandlerMs?: number;
  /**
   * false: leave Redis out, for a liveness probe (judges only what a restart mends: a loop
   * stuck, ended or refused, and handlers past maxHandlerMs), so that a Redis outage does not
   * restart every worker. Default true: Redis reachable too, for readiness.
   */
  readonly redis?: boolean;
}

/** What the indicator adds to its key in the health result. */
export interface EchoMqHealthDetails extends Record<string, unknown> {
  /** Absent with `redis: false`. The target (host:port) is named only when Redis is unreachable. */
  readonly redis?: { readonly reachable: boolean; readonly target?: string };
  /** Every processor's claim loop in this application, by queue (none in a producer-only one). */
  readonly loops: Record<string, LoopDetail>;
  /** When down: every problem found, in one sentence each, `; ` between. */
  readonly message?: string;
}

function checked(value: number | undefined, name: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

/**
 * A @nestjs/terminus health indicator for EchoMQ in this application: up when Redis answers a
 * PING through EchoMQ's own connection and every claim loop that should be claiming is alive and
 * not stuck (see judgeLoops); down otherwise, with each problem in `message` and every loop's
 * state, step, bound and handlers in `loops`. With `redis: false` it is a liveness check, loops
 * only. Provide it beside TerminusModule and call it in a check:
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
    const pingTimeoutMs = checked(options.pingTimeoutMs, 'pingTimeoutMs', 10, 60_000) ?? PING_TIMEOUT_MS;
    const marginMs = checked(options.stuckMarginMs, 'stuckMarginMs', 0, 3_600_000) ?? STUCK_MARGIN_MS;
    const maxHandlerMs = checked(options.maxHandlerMs, 'maxHandlerMs', 1, 604_800_000);
    if (options.redis !== undefined && typeof options.redis !== 'boolean') {
      throw new InvalidArgumentError(`redis must be true or false, got ${String(options.redis)}`);
    }
    const withRedis = options.redis ?? true;
    const indicator = this.health.check(key);
    const redis = withRedis ? await probeRedis(this.connections, pingTimeoutMs) : undefined;
    const judgement = { marginMs, redis: withRedis, ...(maxHandlerMs === undefined ? {} : { maxHandlerMs }) };
    const { loops, problems } = judgeLoops(this.explorer.loopReports(), judgement);
    if (redis && !redis.reachable) problems.unshift(redis.message);
    const details: EchoMqHealthDetails = { ...(redis ? { redis: redisDetail(redis) } : {}), loops };
    if (problems.length === 0) return indicator.up(details);
    return indicator.down({ ...details, message: problems.join('; ') });
  }
}

/** Whether Redis answered; its address only when it did not (a public probe need not show it otherwise). */
function redisDetail(probe: Awaited<ReturnType<typeof probeRedis>>): EchoMqHealthDetails['redis'] {
  return probe.reachable ? { reachable: true } : { target: probe.target, reachable: false };
}
