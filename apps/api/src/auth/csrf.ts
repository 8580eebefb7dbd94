import type { Request } from 'express';

/** The header the dashboard's page sends with every call, and its one accepted value. */
export const CSRF_HEADER = 'x-emq-dashboard';
export const CSRF_VALUE = '1';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a request authenticated by the session cookie may go on. Reads may; a write must
 * carry `X-EMQ-Dashboard: 1`. The cookie is SameSite=Strict already; the header is the second
 * lock: another site's page cannot add a custom header to a cross-site request without a CORS
 * preflight, which the api never grants, so a forged form post or image load arrives without it.
 */
export function passesCsrfRule(request: Request): boolean {
  return READS.has(request.method) || request.headers[CSRF_HEADER] === CSRF_VALUE;
}
