import { Redis } from 'ioredis';
import { redisUrl } from './redis';

const START_RACE = /^Command queue state error/;

/**
 * A connection in MONITOR mode, for tests that count what Redis ran.
 *
 * ioredis switches a connection to monitor mode one tick after Redis acknowledges MONITOR;
 * on a busy server, the lines Redis sends right behind that acknowledgement (in the same TCP
 * read) reach the parser before the switch, and ioredis reports each as a "Command queue
 * state error" on the connection's 'error' event. `Redis.monitor()` would reject on the first
 * and leave the rest unhandled, failing the run; so the connection is opened here with its
 * error listener in place first. Those lines are commands Redis ran before this function
 * returned, so a watch that counts from its return loses nothing by dropping them.
 */
export async function openMonitor(): Promise<Redis> {
  const monitor = new Redis(redisUrl(), { monitor: true, lazyConnect: true });
  const errors: Error[] = [];
  monitor.on('error', (error: Error) => {
    if (!START_RACE.test(error.message)) errors.push(error);
  });
  // Not events.once: it would reject on the very 'error' events dropped above.
  const monitoring = new Promise<void>((resolve) => monitor.once('monitoring', () => resolve()));
  await monitor.connect();
  await monitoring;
  if (errors.length > 0) {
    monitor.disconnect();
    throw errors[0];
  }
  return monitor;
}
