import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadConfig, register } from 'tsconfig-paths';

/**
 * Where things are, whether the battery runs from its tsc build (dist/chaos/test/chaos/*.js,
 * as `npm run chaos` does) or from the TypeScript sources under ts-node.
 */
export const COMPILED = __filename.endsWith('.js');

function findUp(from: string, file: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, file))) return dir;
    if (dirname(dir) === dir) throw new Error(`No ${file} above ${from}`);
  }
}

/** The repository: package.json and node_modules. */
export const REPO_ROOT = findUp(__dirname, 'package.json');

/** The root the tsconfig path aliases resolve against: the repository, or dist/chaos for the build. */
const CODE_ROOT = resolve(__dirname, '..', '..', '..');

/** A child entry of the battery (support/<name>), in the same build as the caller. */
export function childEntry(name: string): string {
  return join(CODE_ROOT, 'test', 'chaos', 'support', COMPILED ? `${name}.js` : `${name}.ts`);
}

/** Node flags a child needs to run the same build as the orchestrator. */
export const CHILD_EXEC_ARGV: readonly string[] = COMPILED
  ? []
  : ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'];

/** Makes '@app/echomq' resolve in the tsc build (ts-node runs get it from -r tsconfig-paths/register). */
export function registerPathAliases(): void {
  if (!COMPILED) return;
  const config = loadConfig(REPO_ROOT);
  if (config.resultType === 'failed') throw new Error(`tsconfig.json: ${config.message}`);
  register({ baseUrl: CODE_ROOT, paths: config.paths });
}
