import { RedisServer } from './redis-server';

/**
 * Starts one throwaway redis-server for the whole run and points every suite at it
 * through REDIS_URL. A REDIS_URL given by the caller is used as it is.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env.REDIS_URL) return;
  const server = await RedisServer.start();
  process.env.REDIS_URL = server.url;
  (globalThis as { __ECHOMQ_REDIS__?: RedisServer }).__ECHOMQ_REDIS__ = server;
  const stop = (): void => {
    const pid = server.pid;
    if (pid !== undefined) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  process.once('exit', stop);
}
