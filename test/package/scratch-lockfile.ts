import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/** One `packages` entry of an npm lockfile (v2/v3): its resolved tarball and what it needs. */
interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [field: string]: unknown;
}

export interface Lockfile {
  name: string;
  lockfileVersion: number;
  requires?: boolean;
  packages: Record<string, LockEntry>;
}

/** The fields of a package's manifest that its lockfile entry repeats. */
export interface TarballManifest {
  readonly name: string;
  readonly version: string;
  readonly license?: string;
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  /** Optional peers (npm reads them from the lockfile's entry: without them it installs the peer). */
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  readonly engines?: Record<string, string>;
  /** Commands the package installs; npm ci links them from the lockfile's entry, not the manifest. */
  readonly bin?: Record<string, string>;
}

/** Flags npm derives from the root's dependency types; it computes them again for the scratch root. */
const DERIVED_FLAGS = ['dev', 'optional', 'devOptional', 'peer'];

export function repoLockfile(root: string): Lockfile {
  return JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as Lockfile;
}

/** The version the repository's lockfile installs at its top level. */
export function lockedVersion(lock: Lockfile, name: string): string {
  const version = lock.packages[`node_modules/${name}`]?.version;
  if (!version) throw new Error(`${name} is not in the repository's package-lock.json`);
  return version;
}

/**
 * The lockfile of a scratch app whose package.json depends on `roots` at the versions the
 * repository locks, and on a local tarball (next to it, as `file:<name>.tgz`). Every entry
 * but the tarball's is cut from the repository's lockfile as it is, so `npm ci` in the app
 * makes exactly the requests the repository's `npm ci` made, all answered by the cache
 * that run filled. Entries keep the paths they have in the repository's tree: Node then
 * resolves each package of the subset to the copy it resolves to there.
 */
export function scratchLockfile(
  lock: Lockfile,
  name: string,
  roots: readonly string[],
  tarballPath: string,
  tarball: TarballManifest,
): Lockfile {
  const packages = lock.packages;
  const needed = new Map<string, LockEntry>();

  // Node's lookup: <from>/node_modules/<dep>, then each enclosing node_modules, then the top.
  const locate = (from: string, dep: string): string | undefined => {
    for (let base = from; ;) {
      const candidate = base ? `${base}/node_modules/${dep}` : `node_modules/${dep}`;
      if (packages[candidate]) return candidate;
      if (!base) return undefined;
      const parent = base.lastIndexOf('/node_modules/');
      base = parent === -1 ? '' : base.slice(0, parent);
    }
  };

  const visit = (from: string, dep: string, optional: boolean): void => {
    const path = locate(from, dep);
    if (path === undefined) {
      if (optional) return;
      throw new Error(`package-lock.json has no copy of ${dep} reachable from ${from || 'the top'}`);
    }
    if (needed.has(path)) return;
    const entry: LockEntry = { ...packages[path] };
    for (const flag of DERIVED_FLAGS) delete entry[flag];
    needed.set(path, entry);
    for (const child of Object.keys(entry.dependencies ?? {})) visit(path, child, false);
    for (const child of Object.keys(entry.optionalDependencies ?? {})) visit(path, child, true);
    for (const child of Object.keys(entry.peerDependencies ?? {})) {
      if (entry.peerDependenciesMeta?.[child]?.optional !== true) visit(path, child, false);
    }
  };

  // The tarball sits at the top, so what it needs resolves from there too.
  for (const dep of [...roots, ...Object.keys(tarball.dependencies ?? {})]) visit('', dep, false);
  const file = `file:${basename(tarballPath)}`;
  needed.set(`node_modules/${tarball.name}`, {
    version: tarball.version,
    resolved: file,
    integrity: `sha512-${createHash('sha512').update(readFileSync(tarballPath)).digest('base64')}`,
    license: tarball.license,
    dependencies: tarball.dependencies,
    peerDependencies: tarball.peerDependencies,
    ...(tarball.peerDependenciesMeta ? { peerDependenciesMeta: tarball.peerDependenciesMeta } : {}),
    engines: tarball.engines,
    ...(tarball.bin ? { bin: tarball.bin } : {}),
  });

  const top: LockEntry = {
    name,
    dependencies: {
      [tarball.name]: file,
      ...Object.fromEntries(roots.map((dep) => [dep, lockedVersion(lock, dep)])),
    },
  };
  const sorted = [...needed.entries()].sort(([a], [b]) => a.localeCompare(b));
  return { name, lockfileVersion: 3, requires: true, packages: { '': top, ...Object.fromEntries(sorted) } };
}
