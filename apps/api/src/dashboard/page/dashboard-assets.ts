import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

/** One file of the dashboard's page, as the server sends it. */
export interface DashboardAsset {
  readonly contentType: string;
  readonly body: string | Buffer;
}

/** The page's entry: what GET /dashboard answers. */
export const DASHBOARD_INDEX = 'index.html';

/** The kinds of file the page is made of; anything else in the folder is not served. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Where the page's files are. Run from its sources (tests, ts-node) this module sits beside
 * them in client/. Built, webpack bundles this module into dist/apps/api/main.js (so __dirname
 * is dist/apps/api) and the build copies the files (nest-cli.json assets) to
 * dist/apps/api/dashboard/page/client.
 */
const FOLDERS = [join(__dirname, 'client'), join(__dirname, 'dashboard', 'page', 'client')];

let files: ReadonlyMap<string, DashboardAsset> | undefined;

/** Reads every file of the page once; the page is a few tens of kilobytes. */
function load(): ReadonlyMap<string, DashboardAsset> {
  const folder = FOLDERS.find((candidate) => existsSync(join(candidate, DASHBOARD_INDEX)));
  if (folder === undefined) {
    throw new Error(
      `The dashboard's page files are missing (looked for ${DASHBOARD_INDEX} in ${FOLDERS.join(' and ')}): ` +
        'the build copies them through the api project\'s "assets" in nest-cli.json',
    );
  }
  const found = new Map<string, DashboardAsset>();
  for (const name of readdirSync(folder)) {
    const contentType = CONTENT_TYPES[extname(name)];
    if (contentType !== undefined) found.set(name, { contentType, body: readFileSync(join(folder, name)) });
  }
  return found;
}

/**
 * The dashboard's files by name: index.html, and the script and style files it loads from
 * /dashboard/assets/<name>; undefined for any other name. Names are looked up, never joined
 * into a path, so no request can reach a file outside the page.
 */
export function dashboardAsset(name: string): DashboardAsset | undefined {
  files ??= load();
  return files.get(name);
}
