import { Injectable } from '@nestjs/common';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiConfig } from '../config/api-config';

/** Version tag of the session format: a new format gets a new tag, and old cookies stop verifying. */
const FORMAT = 'v1';
/** How far in the future a session's issue time may be: the clock skew tolerated between api replicas. */
const SKEW_MS = 60_000;
/** Logouts remembered at most (each until its session would have expired anyway). */
const REVOKED_MAX = 10_000;
const SHAPE = /^v1\.([0-9a-z]{1,10})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

/** A session as read from a good cookie: its random id and when it ends. */
export interface LiveSession {
  readonly id: string;
  readonly expiresAt: number;
}

/**
 * Dashboard sessions as signed cookies: `v1.<issued at>.<random id>.<HMAC>`, the HMAC keyed by
 * a key derived from EMQ_API_TOKEN. Why signed rather than an id looked up in this process:
 * every api replica that shares the token accepts the session (no sticky load balancing, no
 * shared store), a restart logs nobody out, and changing the token ends every session at once.
 * The cookie carries no secret: the token cannot be recovered from it, and the id is random.
 *
 * A session lasts EMQ_DASHBOARD_SESSION_TTL_MS from its login, checked against the ttl in force
 * now (shortening it shortens live sessions). Logout forgets the session in this process only,
 * and only in memory: another replica, or this one after a restart or REVOKED_MAX later logouts,
 * accepts a copy of the cookie until it expires (the browser has dropped its own).
 */
@Injectable()
export class DashboardSessions {
  private readonly key?: Buffer;
  /** Logged-out session ids, each with the instant its session expires. */
  private readonly revoked = new Map<string, number>();

  constructor(private readonly config: ApiConfig) {
    const token = config.apiToken;
    if (token !== undefined) {
      this.key = createHmac('sha256', token).update('echomq dashboard session key').digest();
    }
  }

  /** Whether the api asks for its token at all (EMQ_API_TOKEN is set). */
  get required(): boolean {
    return this.key !== undefined;
  }

  get ttlMs(): number {
    return this.config.dashboardSessionTtlMs;
  }

  /** A new session's cookie value; only when a token is configured. */
  issue(nowMs = Date.now()): string {
    const key = this.requireKey();
    const body = `${FORMAT}.${nowMs.toString(36)}.${randomBytes(16).toString('base64url')}`;
    return `${body}.${sign(key, body)}`;
  }

  /** Whether a cookie value is a live session: well formed, signed with this token, not expired, not logged out. */
  verify(value: string | undefined, nowMs = Date.now()): boolean {
    return this.session(value, nowMs) !== undefined;
  }

  /** The live session a cookie value holds (as verify judges it), or undefined. */
  session(value: string | undefined, nowMs = Date.now()): LiveSession | undefined {
    const session = this.parse(value, nowMs);
    return session !== undefined && !this.revoked.has(session.id) ? session : undefined;
  }

  /** Whether a session read earlier still stands: not logged out here, not expired. No MAC is computed. */
  isLive(session: LiveSession, nowMs = Date.now()): boolean {
    return session.expiresAt > nowMs && !this.revoked.has(session.id);
  }

  /** Logs a session out in this process (a value that is no live session is ignored). */
  revoke(value: string | undefined, nowMs = Date.now()): void {
    const session = this.parse(value, nowMs);
    if (!session) return;
    // Oldest logouts first (insertion order): drop the expired ones at the front, O(1) amortised.
    for (const [id, expiresAt] of this.revoked) {
      if (expiresAt > nowMs) break;
      this.revoked.delete(id);
    }
    if (this.revoked.size >= REVOKED_MAX) {
      // Bounded: the oldest logout is forgotten first (its cookie was dropped by its browser).
      const oldest = this.revoked.keys().next().value;
      if (oldest !== undefined) this.revoked.delete(oldest);
    }
    this.revoked.set(session.id, session.expiresAt);
  }

  private parse(value: string | undefined, nowMs: number): LiveSession | undefined {
    if (this.key === undefined || value === undefined) return undefined;
    const match = SHAPE.exec(value);
    if (!match) return undefined;
    const [, issued, id, mac] = match;
    const expected = sign(this.key, value.slice(0, value.length - mac.length - 1));
    // Equal lengths (both 43 characters), so the comparison's time depends on neither value.
    if (!timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) return undefined;
    const issuedAt = parseInt(issued, 36);
    const expiresAt = issuedAt + this.ttlMs;
    if (issuedAt > nowMs + SKEW_MS || expiresAt <= nowMs) return undefined;
    return { id, expiresAt };
  }

  private requireKey(): Buffer {
    if (this.key === undefined) throw new Error('No dashboard session without EMQ_API_TOKEN');
    return this.key;
  }
}

function sign(key: Buffer, body: string): string {
  return createHmac('sha256', key).update(body).digest('base64url');
}
