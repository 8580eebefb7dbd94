import type { RedisServer } from './redis-server';

export default async function globalTeardown(): Promise<void> {
  const server = (globalThis as { __ECHOMQ_REDIS__?: RedisServer }).__ECHOMQ_REDIS__;
  await server?.destroy();
}
