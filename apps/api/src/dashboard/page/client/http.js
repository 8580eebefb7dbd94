// @ts-check
/**
 * Every request the page makes goes through here: same-origin credentials (the session cookie)
 * and the X-EMQ-Dashboard header, which the api requires on cookie-authenticated writes so a
 * form on another site cannot make them (the cookie is SameSite=Strict too).
 */

/** An answer other than 2xx, with the api's error body when it sent one. */
export class HttpError extends Error {
  /**
   * @param {number} status
   * @param {{ code?: string, message?: string | string[] } | undefined} body
   */
  constructor(status, body) {
    const message = Array.isArray(body?.message) ? body.message.join('; ') : body?.message;
    super(message || `HTTP ${status}`);
    this.status = status;
    this.code = body?.code;
  }
}

/** @type {() => void} */
let onUnauthorized = () => {};

/**
 * Called when the api answers 401 to anything but the login itself: the session has ended.
 * @param {() => void} handler
 */
export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

/**
 * The address of one of the api's routes, given from the api's root (`/queues/x`): resolved
 * against the page's own address (`<api>/dashboard/`), so a proxy's path prefix is kept.
 * @param {string} path
 */
export function apiUrl(path) {
  return new URL(`..${path}`, document.baseURI).href;
}

/**
 * @param {string} path from the api's root, e.g. `/queues/demo/pause`
 * @param {{ method?: string, body?: unknown, quiet401?: boolean }} [options]
 * @returns {Promise<any>} the JSON answer, or undefined for 204
 */
export async function request(path, options = {}) {
  const { method = 'GET', body, quiet401 = false } = options;
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json', 'x-emq-dashboard': '1' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(apiUrl(path), {
    method,
    headers,
    credentials: 'same-origin',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = response.status === 204 ? '' : await response.text();
  /** @type {any} */
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    if (response.status === 401 && !quiet401) onUnauthorized();
    throw new HttpError(response.status, parsed);
  }
  return parsed;
}

/** @param {string} part a queue name, lane or job id in a path */
export function seg(part) {
  return encodeURIComponent(part);
}

/**
 * A query string of the given fields, leaving out empty ones.
 * @param {Record<string, string | number | undefined | null>} fields
 */
export function query(fields) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined && value !== null && value !== '') params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}
