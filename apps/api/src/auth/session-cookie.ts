import type { CookieOptions, Request } from 'express';

/** The dashboard session's cookie over plain http. */
export const SESSION_COOKIE = 'emq_session';
/**
 * Its name over https. A browser takes a `__Host-` cookie only when it is Secure, has Path=/ and
 * no Domain, so no sibling host can set or overwrite it; ports are not separated by cookies,
 * which is why the api is best given a hostname of its own (docs/dashboard.md).
 */
export const SECURE_SESSION_COOKIE = '__Host-emq_session';

/** The longest Cookie header read: a browser's header for one site rarely passes a few KiB. */
const COOKIE_HEADER_MAX = 8_192;

/** The cookie's name for this request: `__Host-emq_session` when it came over https, else `emq_session`. */
export function sessionCookieName(request: Request): string {
  return request.secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}

/**
 * The value of the session cookie in a request's Cookie header, or undefined. Only this one
 * cookie is ever read (by the name for the request's scheme, so an https request never takes a
 * plain `emq_session` another service on the host could have set), and it is parsed here rather
 * than by a cookie-parsing middleware: a header past COOKIE_HEADER_MAX, several session cookies
 * or a value that is not the cookie's own alphabet all read as no session.
 */
export function sessionCookieOf(request: Request): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string' || header.length > COOKIE_HEADER_MAX) return undefined;
  const name = sessionCookieName(request);
  let found: string | undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    if (found !== undefined) return undefined; // two: which one the browser meant is unknown
    found = part.slice(eq + 1).trim();
  }
  return found !== undefined && /^[A-Za-z0-9._-]{1,256}$/.test(found) ? found : undefined;
}

/**
 * The attributes of the cookie: never readable by script (HttpOnly), never sent by another
 * site's page (SameSite=Strict), for the whole api (the page's fetches go to /queues too), and
 * Secure when the request came over https (directly, or through a trusted proxy: EMQ_TRUST_PROXY).
 */
export function sessionCookieOptions(request: Request, maxAgeMs?: number): CookieOptions {
  return {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure: request.secure,
    ...(maxAgeMs === undefined ? {} : { maxAge: maxAgeMs }),
  };
}
