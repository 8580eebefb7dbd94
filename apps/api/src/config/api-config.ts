import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { ApiEnvironment } from './environment';

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
}
