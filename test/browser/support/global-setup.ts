import { buildApps } from './build-apps';
import { chromiumPath } from './chromium';

/**
 * Before any browser spec: find Chromium (none fails the run with how to install it) and build
 * the apps the specs start as processes.
 */
export default function globalSetup(): void {
  process.env.CHROMIUM_PATH = chromiumPath();
  buildApps();
}
