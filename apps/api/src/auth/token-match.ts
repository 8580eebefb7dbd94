import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Constant-time token comparison. Both sides are hashed first so the buffers given
 * to timingSafeEqual always have equal length and the comparison time reveals
 * neither the token's content nor its length.
 */
export function tokensMatch(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** The token of an `Authorization: Bearer <token>` header, or undefined for any other shape. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header);
  return match?.[1];
}
