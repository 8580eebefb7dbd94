import { randomBytes } from 'node:crypto';

/**
 * Every write script call carries a request id, unique to the call and kept by its
 * repeats: a call repeated after its reply was lost presents the same id, and the
 * script returns the reply it recorded the first time (see `replayed` in the prelude).
 * A per-process random base plus a counter: unique across processes without coordination.
 */
const BASE = randomBytes(6).toString('base64url');
let counter = 0;

export function newRequestId(): string {
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${BASE}${counter.toString(36)}`;
}
