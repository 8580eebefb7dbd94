import { DEFAULT_KEY_PREFIX, isValidKeyPrefix, KEY_PREFIX_RULE } from '@app/echomq/internal';
// The api's reader of the same variables, so both hosts take TLS files one way.
import {
  checkRedisTls,
  readRedisTls,
  redisTlsSettings,
  type RedisTlsOptions,
} from '../../api/src/config/redis-tls-files';

/** The worker's settings from the environment; a bad value stops the process with its name. */
export interface WorkerConfig {
  readonly redisUrl: string;
  readonly demoConcurrency: number;
  readonly shutdownGraceMs: number;
  /** EMQ_KEY_PREFIX: the key prefix of every EchoMQ key; the api must use the same one. */
  readonly keyPrefix: string;
  /**
   * EMQ_REDIS_TLS_CA_FILE, _CERT_FILE, _KEY_FILE, _SERVERNAME: TLS to a rediss:// REDIS_URL
   * with a private CA and a client certificate, the files read at boot.
   */
  readonly redisTls?: RedisTlsOptions;
  /**
   * EMQ_METRICS_PORT: the port of the worker's listener for `/metrics` and `/health`; unset
   * (or empty) for none, the default: the worker then opens no port at all. 0 picks a free one.
   */
  readonly metricsPort?: number;
  /** EMQ_METRICS_HOST: the address that listener binds to. Default 0.0.0.0 (every interface, as in a container). */
  readonly metricsHost?: string;
  /**
   * EMQ_METRICS_REDIS: `on` (the default; also when unset here) serves the metrics read from Redis beside this
   * process's own; `off` serves this process's own only, so a fleet of workers does not read
   * every queue from Redis at each scrape, and one api reports the queue-wide metrics for all.
   */
  readonly metricsRedis?: boolean;
  /**
   * EMQ_HEALTH_MAX_HANDLER_MS: /health/live and /health/ready report down when a handler has
   * run longer than this; unset (the default), handlers are reported but not judged.
   */
  readonly healthMaxHandlerMs?: number;
}

function integerFromEnv(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

function isSet(raw: string | undefined): raw is string {
  return raw !== undefined && raw !== '';
}

export function readWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const redisUrl = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (!/^rediss?:\/\//.test(redisUrl)) {
    throw new Error(`REDIS_URL must start with redis:// or rediss://, got ${JSON.stringify(redisUrl)}`);
  }
  const keyPrefix = env.EMQ_KEY_PREFIX || DEFAULT_KEY_PREFIX;
  if (!isValidKeyPrefix(keyPrefix)) {
    throw new Error(`EMQ_KEY_PREFIX must be ${KEY_PREFIX_RULE}, got ${JSON.stringify(keyPrefix)}`);
  }
  const tls = redisTlsSettings(env);
  const problems = checkRedisTls(tls, redisUrl);
  if (problems.length > 0) throw new Error(problems.join('; '));
  const redisTls = readRedisTls(tls);
  const metricsHost = env.EMQ_METRICS_HOST || '0.0.0.0';
  if (/\s/.test(metricsHost)) {
    throw new Error(`EMQ_METRICS_HOST must be a host name or address, got ${JSON.stringify(metricsHost)}`);
  }
  const metricsPort = isSet(env.EMQ_METRICS_PORT)
    ? integerFromEnv(env, 'EMQ_METRICS_PORT', 0, 0, 65_535)
    : undefined;
  const metricsRedis = env.EMQ_METRICS_REDIS || 'on';
  if (metricsRedis !== 'on' && metricsRedis !== 'off') {
    throw new Error(`EMQ_METRICS_REDIS must be on or off, got ${JSON.stringify(metricsRedis)}`);
  }
  const healthMaxHandlerMs = isSet(env.EMQ_HEALTH_MAX_HANDLER_MS)
    ? integerFromEnv(env, 'EMQ_HEALTH_MAX_HANDLER_MS', 0, 1, 604_800_000)
    : undefined;
  return {
    redisUrl,
    keyPrefix,
    ...(redisTls ? { redisTls } : {}),
    ...(metricsPort === undefined ? {} : { metricsPort }),
    metricsHost,
    metricsRedis: metricsRedis === 'on',
    ...(healthMaxHandlerMs === undefined ? {} : { healthMaxHandlerMs }),
    demoConcurrency: integerFromEnv(env, 'EMQ_DEMO_CONCURRENCY', 50, 1, 10_000),
    shutdownGraceMs: integerFromEnv(env, 'EMQ_SHUTDOWN_GRACE_MS', 10_000, 0, 3_600_000),
  };
}
