import type { ClusterNode, RedisOptions } from 'ioredis';

/** Seeds named in a cluster's description; a long list is cut, the count of the rest kept. */
const SEEDS_SHOWN = 3;

/**
 * How a Redis is named in errors and logs: host:port, or the socket path. Credentials are
 * never included, whatever the URL holds. Fields in the URL win over the options, as in
 * ioredis.
 */
export function describeTarget(url: string | undefined, options: RedisOptions): string {
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
  const named = nodes.slice(0, SEEDS_SHOWN).map(describeSeed);
  const more = nodes.length > SEEDS_SHOWN ? ` and ${nodes.length - SEEDS_SHOWN} more` : '';
  return `the cluster seeded by ${named.join(', ')}${more}`;
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
