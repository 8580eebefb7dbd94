import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, posix } from 'node:path';

export interface RunResult {
  readonly code: number | null;
  readonly output: string;
}

/**
 * Runs a command to its end and returns its exit code with stdout and stderr together
 * (never throws on a failing command, so a spec can show the output it failed on). npm's
 * variables for the script that runs jest are left out: a child npm would read them as
 * its own configuration, the repository's root as its prefix among them.
 */
export function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): Promise<RunResult> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^npm_(package_|lifecycle_|command$|config_local_prefix$|config_call$)/i.test(name),
    ),
  );
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, env: { ...inherited, ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 240_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

/** The package's files as the tarball lists them, relative to its root (`package/` dropped). */
export async function tarballFiles(tarball: string): Promise<string[]> {
  const listed = await run('tar', ['-tzf', tarball], dirname(tarball));
  if (listed.code !== 0) throw new Error(`tar could not list ${tarball}:\n${listed.output}`);
  return listed.output
    .split('\n')
    .filter((line) => line.startsWith('package/') && !line.endsWith('/'))
    .map((line) => line.slice('package/'.length))
    .sort();
}

/**
 * Source maps that point at something the package does not ship: a `sourceMappingURL`
 * naming a missing map, or a map source that is neither shipped nor inlined.
 */
export function danglingMaps(packageDir: string, files: readonly string[]): string[] {
  const shipped = new Set(files);
  const dangling: string[] = [];
  for (const file of files.filter((name) => /\.(c|m)?js$|\.d\.ts$/.test(name))) {
    const url = /[#@] sourceMappingURL=(\S+)\s*$/.exec(readFileSync(join(packageDir, file), 'utf8'))?.[1];
    if (url && !url.startsWith('data:') && !shipped.has(posix.join(posix.dirname(file), url))) {
      dangling.push(`${file} -> ${url}`);
    }
  }
  for (const map of files.filter((name) => name.endsWith('.map'))) {
    const parsed = JSON.parse(readFileSync(join(packageDir, map), 'utf8')) as {
      sources: string[];
      sourcesContent?: (string | null)[];
    };
    parsed.sources.forEach((source, i) => {
      const target = posix.join(posix.dirname(map), source);
      if (typeof parsed.sourcesContent?.[i] !== 'string' && !shipped.has(target)) {
        dangling.push(`${map} -> ${source}`);
      }
    });
  }
  return dangling;
}

/**
 * The packages (by name) that the compiled code requires and the declarations import, each
 * with one file that does. tsc writes these specifiers in double quotes; the comments it
 * keeps are in the sources' single quotes, so examples in doc comments do not count.
 */
export function packagesUsed(packageDir: string, files: readonly string[]): Map<string, string> {
  const builtins = new Set(builtinModules);
  const used = new Map<string, string>();
  const specifier = /\brequire\("([^"]+)"\)|\bfrom "([^"]+)"|\bimport\("([^"]+)"\)/g;
  for (const file of files.filter((name) => name.endsWith('.js') || name.endsWith('.d.ts'))) {
    for (const match of readFileSync(join(packageDir, file), 'utf8').matchAll(specifier)) {
      const spec = match[1] ?? match[2] ?? match[3];
      if (spec.startsWith('.') || spec.startsWith('node:') || builtins.has(spec.split('/')[0])) continue;
      const parts = spec.split('/');
      const name = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
      if (!used.has(name)) used.set(name, file);
    }
  }
  return used;
}
