import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EchoMqMetrics } from '@app/echomq/metrics';
import { EchoMqHealthIndicator, type EchoMqHealthOptions } from '@app/echomq/health';
import {
  Inject,
  Injectable,
  Logger,
  ServiceUnavailableException,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { HealthCheckService } from '@nestjs/terminus';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { WorkerConfig } from './worker-config';

export const WORKER_CONFIG = Symbol('WORKER_CONFIG');

/** The probes served, by path: liveness leaves Redis out, readiness does not; `/health` is readiness. */
const PROBES: Readonly<Record<string, { readonly redis: boolean }>> = {
  '/health/live': { redis: false },
  '/health/ready': { redis: true },
  '/health': { redis: true },
};

/**
 * The worker's own small HTTP listener (node:http, no framework), on only when EMQ_METRICS_PORT
 * is set: `GET /metrics` (this process's EchoMQ runtime metrics and Node's process metrics, and
 * unless EMQ_METRICS_REDIS=off the metrics read from Redis), `GET /health/live` (EchoMQ's
 * indicator without Redis: a claim loop stuck or ended, a handler past
 * EMQ_HEALTH_MAX_HANDLER_MS; what a restart mends) and `GET /health/ready` (the same and Redis
 * reachable), with `/health` kept as readiness, in the api's JSON shape, 503 when down. Nothing
 * else is served, and nothing on it writes; it has no token, so bind it where only the scraper
 * and the probes reach.
 */
@Injectable()
export class OpsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Worker');
  private server?: Server;
  private readonly registry: Registry;

  constructor(
    @Inject(WORKER_CONFIG) private readonly config: WorkerConfig,
    metrics: EchoMqMetrics,
    private readonly health: HealthCheckService,
    private readonly echomq: EchoMqHealthIndicator,
  ) {
    const process = new Registry();
    if (config.metricsPort !== undefined) collectDefaultMetrics({ register: process });
    const own = config.metricsRedis === false ? metrics.runtimeRegistry : metrics.registry;
    this.registry = Registry.merge([process, own]);
  }

  /** The port listened on (the one picked, for EMQ_METRICS_PORT=0); undefined when off. */
  get port(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    const { metricsPort, metricsHost = '0.0.0.0' } = this.config;
    if (metricsPort === undefined) return;
    const server = createServer((req, res) => void this.answer(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(metricsPort, metricsHost, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.logger.log(
      `Metrics and health on http://${metricsHost}:${this.port} (/metrics, /health/live, /health/ready)`,
    );
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return json(res, 405, { message: 'Only GET and HEAD' }, { Allow: 'GET, HEAD' });
      }
      if (path === '/metrics') {
        // The text first: a collect that fails answers 500, never a 200 cut short.
        const text = await this.registry.metrics();
        res.writeHead(200, { 'Content-Type': this.registry.contentType });
        return void res.end(req.method === 'HEAD' ? undefined : text);
      }
      const probe = PROBES[path];
      if (probe) return json(res, ...(await this.check(probe)));
      return json(res, 404, {
        message: `No route ${path}: /metrics, /health/live and /health/ready are served here`,
      });
    } catch (error) {
      this.logger.error(`${req.method} ${path}: ${(error as Error).message}`);
      if (!res.headersSent) json(res, 500, { message: 'Internal error' });
      else res.destroy();
    }
  }

  /** The health check, as terminus answers it in an HTTP app: 200 with its result, or 503 with it. */
  private async check(probe: { readonly redis: boolean }): Promise<[number, unknown]> {
    const { healthMaxHandlerMs } = this.config;
    const options: EchoMqHealthOptions = {
      redis: probe.redis,
      ...(healthMaxHandlerMs === undefined ? {} : { maxHandlerMs: healthMaxHandlerMs }),
    };
    try {
      return [200, await this.health.check([() => this.echomq.isHealthy('echomq', options)])];
    } catch (error) {
      if (error instanceof ServiceUnavailableException) return [503, error.getResponse()];
      throw error;
    }
  }
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}
