import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DASHBOARD_DEFAULTS, type ApiEnvironment } from './environment';
import { readRedisTls, REDIS_TLS_VARIABLES, type RedisTlsOptions } from './redis-tls-files';

/** Typed, read-only access to the validated environment; inject this, not process.env. */
@Injectable()
export class ApiConfig {
  constructor(private readonly config: ConfigService<ApiEnvironment, true>) {}

  get redisUrl(): string {
    return this.config.get('REDIS_URL', { infer: true });
  }

  get port(): number {
    return this.config.get('PORT', { infer: true });
  }

  get host(): string {
    return this.config.get('HOST', { infer: true });
  }

  get apiToken(): string | undefined {
    return this.config.get('EMQ_API_TOKEN', { infer: true });
  }

  get bodyLimitBytes(): number {
    return this.config.get('EMQ_BODY_LIMIT', { infer: true });
  }

  get maxPayloadBytes(): number | undefined {
    return this.config.get('EMQ_MAX_PAYLOAD_BYTES', { infer: true });
  }

  get throttleLimit(): number {
    return this.config.get('EMQ_THROTTLE_LIMIT', { infer: true });
  }

  get throttleTtlMs(): number {
    return this.config.get('EMQ_THROTTLE_TTL_MS', { infer: true });
  }

  get nodeId(): number | undefined {
    return this.config.get('EMQ_NODE_ID', { infer: true });
  }

  get keyPrefix(): string | undefined {
    return this.config.get('EMQ_KEY_PREFIX', { infer: true });
  }

  /** Whether the dashboard is served (EMQ_DASHBOARD is not `off`). */
  get dashboardEnabled(): boolean {
    return this.config.get('EMQ_DASHBOARD', { infer: true }) !== 'off';
  }

  get dashboardRefreshMs(): number {
    return (
      this.config.get('EMQ_DASHBOARD_REFRESH_MS', { infer: true }) ??
      DASHBOARD_DEFAULTS.EMQ_DASHBOARD_REFRESH_MS
    );
  }

  get dashboardSessionTtlMs(): number {
    return (
      this.config.get('EMQ_DASHBOARD_SESSION_TTL_MS', { infer: true }) ??
      DASHBOARD_DEFAULTS.EMQ_DASHBOARD_SESSION_TTL_MS
    );
  }

  /** Proxy hops to trust for X-Forwarded-Proto / -For; 0 when unset (the api is reached directly). */
  get trustProxyHops(): number {
    return this.config.get('EMQ_TRUST_PROXY', { infer: true }) ?? 0;
  }

  /**
   * The `tls` options of the Redis connection, the PEM files read now (once, at boot, by the
   * connection's factory); undefined when no EMQ_REDIS_TLS_* variable is set.
   */
  readRedisTls(): RedisTlsOptions | undefined {
    const settings: Record<string, string | undefined> = {};
    for (const name of Object.values(REDIS_TLS_VARIABLES))
      settings[name] = this.config.get(name, { infer: true });
    return readRedisTls(settings);
  }
}
