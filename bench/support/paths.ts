import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadConfig, register } from 'tsconfig-paths';

/**
 * Where things are, whether the benchmark runs from its tsc build
 * (dist/bench/bench/*.js, as `npm run bench` does) or from the TypeScript
 * sources under ts-node.
 */
export const COMPILED = __filename.endsWith('.js');

function findUp(from: string, file: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, file))) return dir;
    if (dirname(dir) === dir) throw new Error(`No ${file} above ${from}`);
  }
}

/** The repository: package.json, node_modules, bench/results. */
export const REPO_ROOT = findUp(__dirname, 'package.json');

/** The root the tsconfig path aliases resolve against: the repository, or dist/bench for the build. */
const CODE_ROOT = resolve(__dirname, '..', '..');

/** The worker host entry next to this build of the orchestrator. */
export const WORKER_HOST_ENTRY = join(CODE_ROOT, 'bench', COMPILED ? 'worker-host.js' : 'worker-host.ts');

/** Node flags a worker host needs to run the same build as the orchestrator. */
export const WORKER_HOST_EXEC_ARGV: readonly string[] = COMPILED
  ? []
  : ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'];

/** Makes '@app/echomq' resolve in the tsc build (ts-node runs get it from -r tsconfig-paths/register). */
export function registerPathAliases(): void {
  if (!COMPILED) return;
  const config = loadConfig(REPO_ROOT);
  if (config.resultType === 'failed') throw new Error(`tsconfig.json: ${config.message}`);
  register({ baseUrl: CODE_ROOT, paths: config.paths });
}
