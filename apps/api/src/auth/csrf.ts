import type { Request } from 'express';

/** The header the dashboard's page sends with every call, and its one accepted value. */
export const CSRF_HEADER = 'x-emq-dashboard';
export const CSRF_VALUE = '1';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Sec-Fetch-Site values a browser gives a request made by another site's page (same-site: a sibling host or port). */
const FOREIGN_SITES = new Set(['cross-site', 'same-site']);

/**
 * Whether a request authenticated by the session cookie may go on. Reads may; a write must
 * carry `X-EMQ-Dashboard: 1`. The cookie is SameSite=Strict already; the header is the second
 * lock: another site's page cannot add a custom header to a cross-site request without a CORS
 * preflight, which the api never grants, so a forged form post or image load arrives without it.
 */
export function passesCsrfRule(request: Request): boolean {
  return READS.has(request.method) || request.headers[CSRF_HEADER] === CSRF_VALUE;
}

/**
 * Whether a write was sent by a browser on behalf of another site's page: it says so in
 * Sec-Fetch-Site (cross-site, or same-site: another port or subdomain), or its Origin names
 * another host than the one asked (request.host: the Host header, or X-Forwarded-Host behind a
 * trusted proxy). A plain HTML form on any site can post to the api without a preflight, so
 * without this rule an api with no token would take writes from every page its operator opens.
 * Requests with an Authorization header are not judged here (no page can add one cross-site
 * without a preflight), nor are clients that send neither header: curl, SDKs, scripts.
 */
export function isForeignWrite(request: Request): boolean {
  if (READS.has(request.method) || request.headers.authorization !== undefined) return false;
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string' && FOREIGN_SITES.has(site.trim().toLowerCase())) return true;
  const origin = request.headers.origin;
  return origin !== undefined && !sameHost(origin, request.host);
}

/** Whether an Origin (`scheme://host[:port]`) names this host and port; `null` and anything malformed do not. */
function sameHost(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    const from = new URL(origin);
    if (from.protocol !== 'http:' && from.protocol !== 'https:') return false;
    // Read through the origin's scheme, so a default port written out (:443) compares equal to none.
    return from.host === new URL(`${from.protocol}//${host}`).host;
  } catch {
    return false;
  }
}
