import type { CookieOptions, Request } from 'express';

/** The dashboard session's cookie. */
export const SESSION_COOKIE = 'emq_session';

/** The longest Cookie header read: a browser's header for one site rarely passes a few KiB. */
const COOKIE_HEADER_MAX = 8_192;

/**
 * The value of the session cookie in a request's Cookie header, or undefined. Only this one
 * cookie is ever read, so it is parsed here rather than by a cookie-parsing middleware: a
 * header past COOKIE_HEADER_MAX, several session cookies or a value that is not the
 * cookie's own alphabet all read as no session.
 */
export function sessionCookieOf(request: Request): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string' || header.length > COOKIE_HEADER_MAX) return undefined;
  let found: string | undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
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
