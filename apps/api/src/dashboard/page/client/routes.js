// @ts-check
/**
 * The page's places live in the URL's hash, so the server serves one document and a link or a
 * reload lands on the same view:
 *   #/                                  every queue
 *   #/q/<queue>/<set>?name=&lane=       one queue, one set (pending, active, schedule, dead, completed)
 *   #/q/<queue>/job/<id>                one job
 */

export const SETS = /** @type {const} */ (['pending', 'active', 'schedule', 'dead', 'completed']);

/** @typedef {typeof SETS[number]} JobSet */
/**
 * @typedef {{ page: 'overview' }
 *   | { page: 'queue', queue: string, set: JobSet, name: string, lane: string }
 *   | { page: 'job', queue: string, id: string }} Route
 */

/**
 * @param {string} value
 * @returns {value is JobSet}
 */
export function isSet(value) {
  return /** @type {readonly string[]} */ (SETS).includes(value);
}

/**
 * @param {string} part
 */
function decode(part) {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * @param {string} hash location.hash
 * @returns {Route}
 */
export function parseRoute(hash) {
  const [path = '', search = ''] = hash.replace(/^#/, '').split('?', 2);
  const parts = path.split('/').filter(Boolean).map(decode);
  if (parts[0] !== 'q' || !parts[1]) return { page: 'overview' };
  const queue = parts[1];
  if (parts[2] === 'job' && parts[3]) return { page: 'job', queue, id: parts[3] };
  const params = new URLSearchParams(search);
  const set = parts[2] && isSet(parts[2]) ? parts[2] : 'pending';
  return { page: 'queue', queue, set, name: params.get('name') ?? '', lane: params.get('lane') ?? '' };
}

/**
 * @param {string} queue
 * @param {JobSet} [set]
 * @param {{ name?: string, lane?: string }} [filters]
 */
export function queueHref(queue, set = 'pending', filters = {}) {
  const params = new URLSearchParams();
  if (filters.name) params.set('name', filters.name);
  if (filters.lane) params.set('lane', filters.lane);
  const search = params.toString();
  return `#/q/${encodeURIComponent(queue)}/${set}${search ? `?${search}` : ''}`;
}

/**
 * @param {string} queue
 * @param {string} id
 */
export function jobHref(queue, id) {
  return `#/q/${encodeURIComponent(queue)}/job/${encodeURIComponent(id)}`;
}
