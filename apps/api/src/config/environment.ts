import { isValidKeyPrefix, KEY_PREFIX_RULE, PAYLOAD_MAX_BYTES } from '@app/echomq/internal';
import { parseByteSize } from './byte-size';
import { checkRedisTls, redisTlsSettings, type RedisTlsSettings } from './redis-tls-files';

/**
 * The api's settings, validated once at boot. Keys are the environment variables
 * themselves, so an error message, the docs and docker-compose.yml all use one name.
 */
export interface ApiEnvironment extends RedisTlsSettings {
  readonly REDIS_URL: string;
  readonly PORT: number;
  readonly HOST: string;
  /** When set, every /queues route needs `Authorization: Bearer <token>`. */
  readonly EMQ_API_TOKEN?: string;
  /** Largest request body, in bytes (given as '1mb', '512kb', ...). */
  readonly EMQ_BODY_LIMIT: number;
  /** Largest serialised job payload; absent keeps the library's default. */
  readonly EMQ_MAX_PAYLOAD_BYTES?: number;
  /** Requests per client per window; 0 turns throttling off. */
  readonly EMQ_THROTTLE_LIMIT: number;
  readonly EMQ_THROTTLE_TTL_MS: number;
  /** Snowflake node number for minted ids; absent leases one from Redis. */
  readonly EMQ_NODE_ID?: number;
  /** The key prefix of every EchoMQ key (the library's keyPrefix); absent keeps `emq`. */
  readonly EMQ_KEY_PREFIX?: string;
  /** `off` removes the dashboard (its routes answer 404, the guard takes no session cookie); absent is on. */
  readonly EMQ_DASHBOARD?: 'on' | 'off';
  /** How often the dashboard's overview is read while someone watches; absent: DASHBOARD_DEFAULTS. */
  readonly EMQ_DASHBOARD_REFRESH_MS?: number;
  /** How long a dashboard session lasts after its login; absent: DASHBOARD_DEFAULTS. */
  readonly EMQ_DASHBOARD_SESSION_TTL_MS?: number;
  /** Proxy hops whose X-Forwarded-* headers are believed (Express's trust proxy); absent: none. */
  readonly EMQ_TRUST_PROXY?: number;
  // And EMQ_REDIS_TLS_CA_FILE, _CERT_FILE, _KEY_FILE, _SERVERNAME (RedisTlsSettings): TLS to a
  // rediss:// REDIS_URL with a private CA and a client certificate; the files are read at boot.
}

export type RawEnvironment = Readonly<Record<string, string | undefined>>;

export const ENV_DEFAULTS = {
  REDIS_URL: 'redis://127.0.0.1:6379',
  PORT: 3000,
  HOST: '0.0.0.0',
  EMQ_BODY_LIMIT: '1mb',
  EMQ_THROTTLE_LIMIT: 6000,
  EMQ_THROTTLE_TTL_MS: 60_000,
} as const;

/**
 * The dashboard's defaults, applied by ApiConfig rather than written into the validated
 * environment, so a variable left unset reads as unset there.
 */
export const DASHBOARD_DEFAULTS = {
  EMQ_DASHBOARD_REFRESH_MS: 2_000,
  EMQ_DASHBOARD_SESSION_TTL_MS: 8 * 3_600_000,
} as const;

const MAX_BODY_LIMIT = 64 * 1024 ** 2;
/** RFC 6750 b64token: what a client can put after "Bearer " without quoting. */
const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Collects every problem, so one failed boot names all the bad variables at once. */
class Problems {
  readonly list: string[] = [];

  add(name: string, expected: string, got: string): undefined {
    this.list.push(`${name} must be ${expected} (got ${JSON.stringify(got)})`);
    return undefined;
  }
}

/** Unset and empty are the same: compose files often pass `VAR=` for "not configured". */
function raw(env: RawEnvironment, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integer(
  env: RawEnvironment,
  problems: Problems,
  name: string,
  min: number,
  max: number,
): number | undefined {
  const text = raw(env, name);
  if (text === undefined) return undefined;
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    return problems.add(name, `an integer from ${min} to ${max}`, text);
  }
  return value;
}

function redisUrl(env: RawEnvironment, problems: Problems): string {
  const text = raw(env, 'REDIS_URL') ?? ENV_DEFAULTS.REDIS_URL;
  let protocol = '';
  try {
    protocol = new URL(text).protocol;
  } catch {
    // reported below
  }
  if (protocol !== 'redis:' && protocol !== 'rediss:') {
    problems.add('REDIS_URL', 'a redis:// or rediss:// URL', text);
  }
  return text;
}

function bodyLimit(env: RawEnvironment, problems: Problems): number {
  const text = raw(env, 'EMQ_BODY_LIMIT') ?? ENV_DEFAULTS.EMQ_BODY_LIMIT;
  const bytes = parseByteSize(text);
  if (bytes === undefined || bytes < 1 || bytes > MAX_BODY_LIMIT) {
    problems.add('EMQ_BODY_LIMIT', 'a size from 1b to 64mb, such as 512kb or 1mb', text);
    return 0;
  }
  return bytes;
}

function host(env: RawEnvironment, problems: Problems): string {
  const text = raw(env, 'HOST') ?? ENV_DEFAULTS.HOST;
  if (/\s/.test(text)) problems.add('HOST', 'a host name or address', text);
  return text;
}

function apiToken(env: RawEnvironment, problems: Problems): string | undefined {
  const text = raw(env, 'EMQ_API_TOKEN');
  if (text !== undefined && !TOKEN.test(text)) {
    // The token itself is a secret: report its shape, never its value.
    problems.list.push(
      'EMQ_API_TOKEN must be a bearer token of letters, digits and - . _ ~ + / (optionally ending in =)',
    );
  }
  return text;
}

function dashboardSwitch(env: RawEnvironment, problems: Problems): 'on' | 'off' | undefined {
  const text = raw(env, 'EMQ_DASHBOARD');
  if (text === undefined || text === 'on' || text === 'off') return text;
  return problems.add('EMQ_DASHBOARD', 'on or off', text);
}

/**
 * Whether the dashboard is served. Read by AppModule.forRoot before the environment is
 * validated (which module to import is decided there); a bad value fails that validation.
 */
export function dashboardEnabled(env: RawEnvironment): boolean {
  return raw(env, 'EMQ_DASHBOARD') !== 'off';
}

function keyPrefix(env: RawEnvironment, problems: Problems): string | undefined {
  const text = raw(env, 'EMQ_KEY_PREFIX');
  if (text === undefined || isValidKeyPrefix(text)) return text;
  return problems.add('EMQ_KEY_PREFIX', KEY_PREFIX_RULE, text);
}

/**
 * Validates the environment (the `validate` function given to ConfigModule).
 * Throws one Error naming every bad variable, which stops the app at boot.
 */
export function validateEnvironment(env: RawEnvironment): ApiEnvironment {
  const problems = new Problems();
  const url = redisUrl(env, problems);
  const tls = redisTlsSettings(env);
  problems.list.push(...checkRedisTls(tls, url));
  const validated: ApiEnvironment = {
    REDIS_URL: url,
    PORT: integer(env, problems, 'PORT', 0, 65_535) ?? ENV_DEFAULTS.PORT,
    HOST: host(env, problems),
    EMQ_API_TOKEN: apiToken(env, problems),
    EMQ_BODY_LIMIT: bodyLimit(env, problems),
    EMQ_MAX_PAYLOAD_BYTES: integer(env, problems, 'EMQ_MAX_PAYLOAD_BYTES', 1, PAYLOAD_MAX_BYTES),
    EMQ_THROTTLE_LIMIT:
      integer(env, problems, 'EMQ_THROTTLE_LIMIT', 0, 1_000_000_000) ?? ENV_DEFAULTS.EMQ_THROTTLE_LIMIT,
    EMQ_THROTTLE_TTL_MS:
      integer(env, problems, 'EMQ_THROTTLE_TTL_MS', 1, 86_400_000) ?? ENV_DEFAULTS.EMQ_THROTTLE_TTL_MS,
    EMQ_NODE_ID: integer(env, problems, 'EMQ_NODE_ID', 0, 1023),
    EMQ_KEY_PREFIX: keyPrefix(env, problems),
    EMQ_DASHBOARD: dashboardSwitch(env, problems),
    EMQ_DASHBOARD_REFRESH_MS: integer(env, problems, 'EMQ_DASHBOARD_REFRESH_MS', 100, 60_000),
    EMQ_DASHBOARD_SESSION_TTL_MS: integer(env, problems, 'EMQ_DASHBOARD_SESSION_TTL_MS', 60_000, 604_800_000),
    EMQ_TRUST_PROXY: integer(env, problems, 'EMQ_TRUST_PROXY', 0, 32),
    ...tls,
  };
  if (problems.list.length > 0) {
    throw new Error(`Invalid environment: ${problems.list.join('; ')}`);
  }
  return validated;
}
