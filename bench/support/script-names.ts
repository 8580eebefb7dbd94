import { createHash } from 'node:crypto';

/** The SHA1 Redis names a script by (what EVALSHA carries). */
export function scriptSha(lua: string): string {
  return createHash('sha1').update(lua).digest('hex');
}

/**
 * SHA1 -> name for a library's scripts, so the idle-cost figure can say which script an
 * EVALSHA seen by MONITOR ran (Redis cannot tell: a script is known to it by its SHA1 only).
 */
export function namesBySha(scripts: Iterable<readonly [name: string, lua: string]>): Map<string, string> {
  const names = new Map<string, string>();
  for (const [name, lua] of scripts) names.set(scriptSha(lua), name);
  return names;
}
