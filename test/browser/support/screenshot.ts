import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Page } from 'playwright-core';
import { ROOT } from './build-apps';
import { depth } from './page-state';
import type { RunningApps } from './running-apps';

export const SCREENSHOT = join(ROOT, 'docs', 'images', 'dashboard.png');

/**
 * docs/images/dashboard.png, the README's picture, taken from a page showing the overview: a
 * second queue, paused, with jobs waiting in two lanes is added beside what the test built.
 */
export async function takeScreenshot(page: Page, apps: RunningApps): Promise<void> {
  await apps.call('POST', '/queues/emails/pause');
  await Promise.all(
    Array.from({ length: 9 }, (_, n) =>
      apps.enqueue('emails', { name: 'welcome', data: { n }, lane: n % 3 === 0 ? 'tenant-a' : 'tenant-b' }),
    ),
  );
  await depth(page, 'emails', 'pending').filter({ hasText: /^9$/ }).waitFor();
  mkdirSync(dirname(SCREENSHOT), { recursive: true });
  // Down to the end of the content, not the empty viewport below it.
  const main = await page.locator('main').boundingBox();
  const height = Math.ceil((main?.y ?? 0) + (main?.height ?? 600));
  await page.screenshot({
    path: SCREENSHOT,
    clip: { x: 0, y: 0, width: page.viewportSize()?.width ?? 1200, height },
  });
}
