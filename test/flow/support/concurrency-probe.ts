import type { Redis } from 'ioredis';

/**
 * Server-side markers for "how many handlers ran at once": a handler calls enter() when it
 * starts and leave() when it ends, in whichever process it runs. Each scope (a lane, or
 * '*' for the whole queue) keeps a live counter and the highest value it ever reached, both
 * updated inside Redis in one script, so the maximum is exact across processes without any
 * clock. The counter only moves inside handlers, which run strictly within their job's stay
 * in active, so the maximum seen can never exceed the number of jobs active at once: a
 * maximum above a cap means the cap was broken.
 */
const ENTER_LUA = `
-- KEYS: per scope, its counter then its maximum; KEYS[#KEYS] the served-by hash. ARGV[1] worker.
for i = 1, #KEYS - 1, 2 do
  local now = redis.call('INCR', KEYS[i])
  if now > tonumber(redis.call('GET', KEYS[i + 1]) or '0') then redis.call('SET', KEYS[i + 1], now) end
end
redis.call('HINCRBY', KEYS[#KEYS], ARGV[1], 1)
return 1
`;

const LEAVE_LUA = `
for i = 1, #KEYS do redis.call('DECR', KEYS[i]) end
return 1
`;

/** The scope that counts every job of the queue, whatever its lane. */
export const WHOLE_QUEUE = '*';

export class ConcurrencyProbe {
  constructor(
    private readonly redis: Redis,
    /** Usually the queue name: keeps markers of different tests apart. */
    private readonly name: string,
  ) {}

  async enter(scopes: readonly string[], worker: string): Promise<void> {
    const keys = scopes.flatMap((scope) => [this.activeKey(scope), this.maxKey(scope)]);
    await this.redis.eval(ENTER_LUA, keys.length + 1, ...keys, this.servedKey(), worker);
  }

  async leave(scopes: readonly string[]): Promise<void> {
    const keys = scopes.map((scope) => this.activeKey(scope));
    await this.redis.eval(LEAVE_LUA, keys.length, ...keys);
  }

  /** The most handlers of this scope that were ever running at the same time. */
  async maxSeen(scope: string): Promise<number> {
    return Number((await this.redis.get(this.maxKey(scope))) ?? 0);
  }

  /** Handlers of this scope running now (0 once everything finished). */
  async runningNow(scope: string): Promise<number> {
    return Number((await this.redis.get(this.activeKey(scope))) ?? 0);
  }

  /** How many jobs each worker started (worker name -> count). */
  async startsByWorker(): Promise<Record<string, number>> {
    const raw = await this.redis.hgetall(this.servedKey());
    return Object.fromEntries(Object.entries(raw).map(([worker, count]) => [worker, Number(count)]));
  }

  private activeKey(scope: string): string {
    return `flowprobe:${this.name}:active:${scope}`;
  }

  private maxKey(scope: string): string {
    return `flowprobe:${this.name}:max:${scope}`;
  }

  private servedKey(): string {
    return `flowprobe:${this.name}:served`;
  }
}
