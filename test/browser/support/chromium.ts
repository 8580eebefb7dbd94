import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

const NAMES = ['chromium', 'chromium-browser'];

/** The first executable called `name` on the PATH. */
function onPath(name: string): string | undefined {
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    if (!folder) continue;
    const candidate = join(folder, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The Chromium the browser suite drives: CHROMIUM_PATH when set, else `chromium` on the PATH
 * (Debian's package). No browser is a failure that says how to get one, never a skipped suite.
 */
export function chromiumPath(): string {
  const given = process.env.CHROMIUM_PATH;
  if (given) {
    try {
      accessSync(given, constants.X_OK);
      return given;
    } catch {
      throw new Error(`CHROMIUM_PATH is ${JSON.stringify(given)}, which is not an executable file`);
    }
  }
  for (const name of NAMES) {
    const found = onPath(name);
    if (found) return found;
  }
  throw new Error(
    'The browser suite needs Chromium and found none: install it (Debian/Ubuntu: apt-get install chromium) ' +
      'or set CHROMIUM_PATH to a Chromium or Chrome executable.',
  );
}
