import type { ClusterNode, RedisOptions, SentinelAddress } from 'ioredis';

/** Seeds (or sentinels) named in a description; a long list is cut, the count of the rest kept. */
const SEEDS_SHOWN = 3;

/**
 * How a Redis is named in errors and logs: host:port, the socket path, or a master found
 * through Sentinel by its name and sentinels. Credentials are never included, whatever the
 * URL or the options hold. Fields in the URL win over the options, as in ioredis.
 */
export function describeTarget(url: string | undefined, options: RedisOptions): string {
  if (options.sentinels !== undefined && options.sentinels.length > 0 && url === undefined) {
    return describeSentinels(options.name, options.sentinels);
  }
  if (url !== undefined) {
    // ioredis reads a URL that starts with '/' as a socket path (with optional ?query).
    if (url.startsWith('/') && !url.startsWith('//')) return url.split('?')[0];
    try {
      const parsed = new URL(url);
      return `${parsed.hostname || options.host || 'localhost'}:${parsed.port || options.port || 6379}`;
    } catch {
      return 'an unparsable url';
    }
  }
  if (options.path) return options.path;
  return `${options.host ?? 'localhost'}:${options.port ?? 6379}`;
}

/** A cluster by its seeds: "the cluster seeded by 10.0.0.1:7000, 10.0.0.2:7000". */
export function describeCluster(nodes: readonly ClusterNode[]): string {
  return `the cluster seeded by ${listed(nodes.map(describeSeed))}`;
}

/**
 * A master found through Sentinel, by the name the sentinels watch it under and the sentinels
 * asked: "master mymaster via sentinels 10.0.0.1:26379, 10.0.0.2:26379". The address of the
 * master itself changes with each failover, so it is not part of the name.
 */
export function describeSentinels(
  name: string | undefined,
  sentinels: readonly Partial<SentinelAddress>[],
): string {
  const asked = sentinels.map((sentinel) => `${sentinel.host ?? 'localhost'}:${sentinel.port ?? 26379}`);
  return `master ${name ?? '(unnamed)'} via sentinels ${listed(asked)}`;
}

function listed(names: readonly string[]): string {
  const more = names.length > SEEDS_SHOWN ? ` and ${names.length - SEEDS_SHOWN} more` : '';
  return `${names.slice(0, SEEDS_SHOWN).join(', ')}${more}`;
}

function describeSeed(node: ClusterNode): string {
  if (typeof node === 'number') return `localhost:${node}`;
  if (typeof node === 'string') {
    // A seed is "host:port", a bare port, or a redis:// URL.
    if (/^\d+$/.test(node)) return `localhost:${node}`;
    return /^rediss?:\/\//i.test(node) ? describeTarget(node, {}) : node;
  }
  return `${node.host ?? 'localhost'}:${node.port ?? 6379}`;
}
