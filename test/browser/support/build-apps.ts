import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..', '..');
export const API_MAIN = join(ROOT, 'dist', 'apps', 'api', 'main.js');
export const WORKER_MAIN = join(ROOT, 'dist', 'apps', 'worker', 'main.js');
/** Where the build copies the dashboard's page, beside the api's bundle (dashboard-assets.ts reads it). */
const PAGE_INDEX = join(ROOT, 'dist', 'apps', 'api', 'dashboard', 'page', 'client', 'index.html');

/**
 * Builds both apps exactly as `npm run build` does, so the suite drives what ships: the bundles
 * and the page's files the build copies beside the api's. EMQ_BROWSER_BUILD=0 reuses an
 * existing build (a quicker loop while working on the tests themselves).
 */
export function buildApps(): void {
  if (process.env.EMQ_BROWSER_BUILD === '0' && existsSync(API_MAIN) && existsSync(WORKER_MAIN)) return;
  for (const app of ['api', 'worker']) {
    const run = spawnSync('npx', ['nest', 'build', app], { cwd: ROOT, encoding: 'utf8' });
    if (run.error || run.status !== 0) {
      throw new Error(
        `nest build ${app} failed (${run.error?.message ?? `exit ${run.status}`}):\n${run.stdout}\n${run.stderr}`,
      );
    }
  }
  if (!existsSync(PAGE_INDEX)) {
    throw new Error(
      `The build did not copy the dashboard's page (no ${PAGE_INDEX}): the api project in nest-cli.json ` +
        'needs "assets": [{ "include": "dashboard/page/client/*.{html,css,js}" }]',
    );
  }
}
