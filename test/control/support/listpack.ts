import type { Redis } from 'ioredis';

/**
 * How many held lanes a case may use so that held stays one listpack (whose HSCAN returns the
 * whole hash in one page): `wanted`, or fewer when the server's hash-max-listpack-entries is
 * lower (this suite's server says 512; upstream Redis 7 says 128). Fails with a clear message
 * when the server cannot give a listpack of `least` lanes, rather than on a behaviour assertion.
 */
export async function listpackLanes(redis: Redis, wanted: number, least: number): Promise<number> {
  const [, value] = (await redis.config('GET', 'hash-max-listpack-entries')) as string[];
  const entries = Number(value);
  if (!Number.isInteger(entries) || entries < least) {
    throw new Error(
      `precondition: this case needs hash-max-listpack-entries >= ${least} (a held hash of ${least} lanes ` +
        `kept as one listpack); the server says ${value ?? 'nothing (no such setting: Redis before 7?)'}`,
    );
  }
  return Math.min(wanted, entries);
}
