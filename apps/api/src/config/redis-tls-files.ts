import { readFileSync } from 'node:fs';

/**
 * TLS to Redis from files named in the environment: a private CA, a client certificate and
 * its key (for a server with `tls-auth-clients yes`), and the name the server's certificate
 * carries when REDIS_URL's host is another (a tunnel, an IP address). Shared by the api and
 * the worker host, so both read the same variables the same way.
 */
export const REDIS_TLS_VARIABLES = {
  ca: 'EMQ_REDIS_TLS_CA_FILE',
  cert: 'EMQ_REDIS_TLS_CERT_FILE',
  key: 'EMQ_REDIS_TLS_KEY_FILE',
  servername: 'EMQ_REDIS_TLS_SERVERNAME',
} as const;

/** The variables as given (paths and a name), after trimming; unset and empty are the same. */
export interface RedisTlsSettings {
  readonly EMQ_REDIS_TLS_CA_FILE?: string;
  readonly EMQ_REDIS_TLS_CERT_FILE?: string;
  readonly EMQ_REDIS_TLS_KEY_FILE?: string;
  readonly EMQ_REDIS_TLS_SERVERNAME?: string;
}

/** What ioredis takes as `tls` (node:tls connect options): PEM text, not paths. */
export interface RedisTlsOptions {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly servername?: string;
}

const FILES = ['ca', 'cert', 'key'] as const;
/** A host name as a certificate names it: letters, digits, dots, hyphens (and `*.` for a wildcard). */
const SERVERNAME =
  /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

function isTlsUrl(url: string): boolean {
  try {
    return new URL(url).protocol === 'rediss:';
  } catch {
    return false;
  }
}

function given(env: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** The settings from an environment, unchecked (checkRedisTls says what is wrong with them). */
export function redisTlsSettings(env: Readonly<Record<string, string | undefined>>): RedisTlsSettings {
  const settings: Record<string, string> = {};
  for (const name of Object.values(REDIS_TLS_VARIABLES)) {
    const value = given(env, name);
    if (value !== undefined) settings[name] = value;
  }
  return settings;
}

/** Reads one PEM file; the error names the variable, the path and why (never the file's content). */
function readPem(variable: string, path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new Error(`${variable} must name a readable PEM file (got ${JSON.stringify(path)}: ${code})`);
  }
  if (!text.includes('-----BEGIN ')) {
    throw new Error(`${variable} must name a PEM file (${JSON.stringify(path)} has no -----BEGIN line)`);
  }
  return text;
}

/**
 * Every problem with the settings, each naming its variable: a setting with a redis:// URL
 * (TLS needs rediss://, and a setting that would be ignored is refused rather than trusted),
 * a certificate without its key or a key without its certificate, a file that cannot be read
 * or is not PEM, a server name that is not a host name. Empty when they can be used.
 */
export function checkRedisTls(settings: RedisTlsSettings, redisUrl: string): string[] {
  const problems: string[] = [];
  const set = Object.values(REDIS_TLS_VARIABLES).filter((name) => settings[name] !== undefined);
  if (set.length > 0 && !isTlsUrl(redisUrl)) {
    // Not the URL itself: it may carry a password.
    return set.map((name) => `${name} needs a rediss:// REDIS_URL (REDIS_URL is not rediss://)`);
  }
  const cert = settings[REDIS_TLS_VARIABLES.cert];
  const key = settings[REDIS_TLS_VARIABLES.key];
  if (cert !== undefined && key === undefined)
    problems.push(
      `${REDIS_TLS_VARIABLES.key} must be set with ${REDIS_TLS_VARIABLES.cert} (the certificate's key)`,
    );
  if (key !== undefined && cert === undefined)
    problems.push(
      `${REDIS_TLS_VARIABLES.cert} must be set with ${REDIS_TLS_VARIABLES.key} (the key's certificate)`,
    );
  for (const file of FILES) {
    const variable = REDIS_TLS_VARIABLES[file];
    const path = settings[variable];
    if (path === undefined) continue;
    try {
      readPem(variable, path);
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  const servername = settings[REDIS_TLS_VARIABLES.servername];
  if (servername !== undefined && !SERVERNAME.test(servername))
    problems.push(
      `${REDIS_TLS_VARIABLES.servername} must be a host name (got ${JSON.stringify(servername)})`,
    );
  return problems;
}

/**
 * The `tls` connection options the settings give (the files read now), or undefined when none
 * is set. Throws naming the variable when a file cannot be read: call it at boot, after
 * checkRedisTls passed.
 */
export function readRedisTls(settings: RedisTlsSettings): RedisTlsOptions | undefined {
  const tls: Record<string, string> = {};
  for (const file of FILES) {
    const variable = REDIS_TLS_VARIABLES[file];
    const path = settings[variable];
    if (path !== undefined) tls[file] = readPem(variable, path);
  }
  const servername = settings[REDIS_TLS_VARIABLES.servername];
  if (servername !== undefined) tls.servername = servername;
  return Object.keys(tls).length > 0 ? tls : undefined;
}
