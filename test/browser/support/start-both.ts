import type { Browser } from 'playwright-core';
import { launchBrowser } from './browser';
import type { RunningApps } from './running-apps';

/**
 * Starts the apps and the browser side by side. If either fails, whatever did start is stopped
 * before the error is thrown: a browser left running would keep jest from exiting.
 */
export async function startBoth(apps: Promise<RunningApps>): Promise<[RunningApps, Browser]> {
  const [started, launched] = await Promise.allSettled([apps, launchBrowser()]);
  if (started.status === 'fulfilled' && launched.status === 'fulfilled')
    return [started.value, launched.value];
  if (started.status === 'fulfilled') await started.value.stop();
  if (launched.status === 'fulfilled') await launched.value.close();
  throw started.status === 'rejected' ? started.reason : (launched as PromiseRejectedResult).reason;
}
