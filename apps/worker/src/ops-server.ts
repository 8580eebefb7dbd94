import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EchoMqMetrics } from '@app/echomq/metrics';
import { EchoMqHealthIndicator } from '@app/echomq/health';
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

/**
 * The worker's own small HTTP listener (node:http, no framework), on only when EMQ_METRICS_PORT
 * is set: `GET /metrics` (EchoMQ's metrics, this process's runtime ones included, and Node's
 * process metrics) and `GET /health` (EchoMQ's health indicator: Redis, and every claim loop
 * alive and not stuck), in the api's JSON shape, 503 when down. Nothing else is served, and
 * nothing on it writes; it has no token, so bind it where only the scraper and the probes reach.
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
    this.registry = Registry.merge([process, metrics.registry]);
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
    this.logger.log(`Metrics and health on http://${metricsHost}:${this.port} (/metrics, /health)`);
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
      if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, { message: 'Only GET' });
      if (path === '/metrics') {
        res.writeHead(200, { 'Content-Type': this.registry.contentType });
        return void res.end(req.method === 'HEAD' ? undefined : await this.registry.metrics());
      }
      if (path === '/health') return json(res, ...(await this.check()));
      return json(res, 404, { message: `No route ${path}: /metrics and /health are served here` });
    } catch (error) {
      this.logger.error(`${req.method} ${path}: ${(error as Error).message}`);
      if (!res.headersSent) json(res, 500, { message: 'Internal error' });
      else res.destroy();
    }
  }

  /** The health check, as terminus answers it in an HTTP app: 200 with its result, or 503 with it. */
  private async check(): Promise<[number, unknown]> {
    try {
      return [200, await this.health.check([() => this.echomq.isHealthy('echomq')])];
    } catch (error) {
      if (error instanceof ServiceUnavailableException) return [503, error.getResponse()];
      throw error;
    }
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}
