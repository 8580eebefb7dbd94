import { EchoMqHealthIndicator } from '@app/echomq/health';
import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { SkipThrottle } from '@nestjs/throttler';
import { Public } from '../auth/public.decorator';

/**
 * Readiness: the api is useless without Redis (a liveness probe on it would restart the api for
 * an outage a restart does not mend). Open, and never throttled, for probes, so Redis's address
 * shows only when Redis is unreachable. The api runs no claim loops, so EchoMQ's indicator checks
 * Redis alone here; its key stays `redis`, as probes and dashboards read it.
 */
@ApiTags('health')
@Public()
@SkipThrottle()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly echomq: EchoMqHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  @ApiOperation({ summary: '200 when Redis answers PING, 503 otherwise' })
  check(): Promise<HealthCheckResult> {
    return this.health.check([() => this.echomq.isHealthy('redis')]);
  }
}
