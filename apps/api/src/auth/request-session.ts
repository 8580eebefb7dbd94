import type { Request } from 'express';
import type { LiveSession } from './dashboard-sessions';

/** The session the guard authenticated each request by, kept beside it rather than on it. */
const sessions = new WeakMap<Request, LiveSession>();

/** Records that the guard let this request through on a dashboard session. */
export function attachSession(request: Request, session: LiveSession): void {
  sessions.set(request, session);
}

/** The dashboard session this request was authenticated by; undefined for a bearer token or an api without one. */
export function sessionOf(request: Request): LiveSession | undefined {
  return sessions.get(request);
}
