import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { redisUrl, uniqueQueue } from '../support/redis';
import { danglingMaps, packagesUsed, run, tarballFiles, type RunResult } from './package-contents';
import { scratchApp } from './scratch-app';
import { lockedVersion, repoLockfile, scratchLockfile, type TarballManifest } from './scratch-lockfile';

interface Manifest extends TarballManifest {
  readonly main: string;
  readonly types: string;
  readonly exports: Record<string, string | { types: string; default: string }>;
  readonly [field: string]: unknown;
}

const ROOT = join(__dirname, '..', '..');
const LIB_SOURCES = join(ROOT, 'libs', 'echomq', 'src');
/** What the scratch app depends on besides the tarball, at the versions the repository locks. */
const APP_DEPENDENCIES = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/schedule',
  '@nestjs/terminus',
  'ioredis',
  'reflect-metadata',
  'rxjs',
  'typescript',
  '@types/node',
];

function expectSuccess(step: string, result: RunResult): void {
  if (result.code !== 0) throw new Error(`${step} exited with ${result.code}:\n${result.output}`);
}

/**
 * `npm run pack:lib` builds the tarball users install. It is installed into a Nest app in a
 * scratch folder outside the repository, from the npm cache that `npm ci` filled, and the
 * app is type-checked strictly and run against the suite's Redis.
 */
describe('the package npm run pack:lib writes', () => {
  let work: string;
  let tarball: string;
  let files: string[];
  let manifest: Manifest;
  let app: string;
  let installed: string;
  let hasTesting: boolean;
  let build: Promise<RunResult> | undefined;

  /** One strict build of the app, awaited by every test that needs it. */
  const built = (): Promise<RunResult> =>
    (build ??= run(process.execPath, [tsc(), '-p', 'tsconfig.json'], app));
  const tsc = (): string => join(app, 'node_modules', 'typescript', 'bin', 'tsc');

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'echomq-package-'));
    // The pack script decides the same way whether to open the ./testing entry.
    hasTesting = existsSync(join(LIB_SOURCES, 'testing', 'index.ts'));
    const packed = join(work, 'packed');
    expectSuccess('npm run pack:lib', await run('npm', ['run', '--silent', 'pack:lib', '--', packed], ROOT));
    const tarballs = readdirSync(packed).filter((name) => name.endsWith('.tgz'));
    expect(tarballs).toHaveLength(1);
    tarball = join(packed, tarballs[0]);
    files = await tarballFiles(tarball);
    manifest = JSON.parse(readFileSync(join(packed, 'package', 'package.json'), 'utf8')) as Manifest;

    app = join(work, 'app');
    mkdirSync(join(app, 'src'), { recursive: true });
    copyFileSync(tarball, join(app, basename(tarball)));
    const lock = repoLockfile(ROOT);
    const versions = Object.fromEntries(APP_DEPENDENCIES.map((name) => [name, lockedVersion(lock, name)]));
    const scratch = scratchApp('echomq-scratch-app', basename(tarball), versions, hasTesting);
    writeFileSync(join(app, 'package.json'), JSON.stringify(scratch.packageJson, null, 2));
    const appLock = scratchLockfile(
      lock,
      'echomq-scratch-app',
      APP_DEPENDENCIES,
      join(app, basename(tarball)),
      manifest,
    );
    writeFileSync(join(app, 'package-lock.json'), JSON.stringify(appLock, null, 2));
    for (const [file, text] of Object.entries(scratch.files)) writeFileSync(join(app, file), text);
    // With every version locked, npm needs only what the repository's `npm ci` cached: no
    // request leaves the machine unless that cache was cleared.
    expectSuccess(
      'npm ci in the scratch app',
      await run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], app),
    );
    installed = join(app, 'node_modules', '@echomq', 'nestjs');
  }, 300_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('is installed outside the repository, as a copy of the tarball', () => {
    expect(relative(ROOT, app).startsWith('..')).toBe(true);
    expect(readdirSync(join(app, 'node_modules', '@echomq'))).toEqual(['nestjs']);
    expect(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))).toEqual(manifest);
  });

  it('ships compiled JS, declarations, README and LICENSE, and no sources or dangling maps', () => {
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json']));
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    expect(danglingMaps(installed, files)).toEqual([]);
    const topLevel = ['LICENSE', 'README.md', 'package.json'];
    expect(files.filter((file) => !topLevel.includes(file) && !file.startsWith('dist/'))).toEqual([]);

    const sources = readdirSync(LIB_SOURCES, { recursive: true, encoding: 'utf8' }).filter((file) =>
      file.endsWith('.ts'),
    );
    const compiled = sources.flatMap((file) => [
      `dist/${file.replace(/\.ts$/, '.js')}`,
      `dist/${file.replace(/\.ts$/, '.d.ts')}`,
    ]);
    expect(
      compiled.map((file) => file.split('\\').join('/')).filter((file) => !files.includes(file)),
    ).toEqual([]);
  });

  it('carries the Lua scripts inside its compiled JS', () => {
    const scripts = readdirSync(join(LIB_SOURCES, 'scripts', 'lua')).filter((file) =>
      file.endsWith('.lua.ts'),
    );
    expect(scripts.length).toBeGreaterThan(0);
    for (const script of scripts) {
      const js = readFileSync(
        join(installed, 'dist', 'scripts', 'lua', script.replace(/\.ts$/, '.js')),
        'utf8',
      );
      expect(js).toMatch(/redis\.p?call\(/);
    }
  });

  it('has a manifest ready to publish, with an exports map whose every target ships', () => {
    expect(manifest).toMatchObject({
      name: '@echomq/nestjs',
      license: 'MIT',
      publishConfig: { access: 'public' },
      engines: { node: expect.any(String) },
    });
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(manifest.description).toEqual(expect.any(String));
    expect(manifest.keywords).toEqual(expect.arrayContaining(['nestjs', 'redis', 'queue']));
    // Nothing meant for this repository (its note, the flag that keeps the sources unpacked,
    // scripts, dev dependencies); and no `sideEffects: false`, as the decorators register
    // metadata when their modules load.
    for (const field of ['private', '//', 'scripts', 'devDependencies', 'sideEffects']) {
      expect(manifest).not.toHaveProperty([field]);
    }

    const entries = ['.', './internal', './health', './package.json', ...(hasTesting ? ['./testing'] : [])];
    expect(Object.keys(manifest.exports).sort()).toEqual(entries.sort());
    const targets = [manifest.main, manifest.types];
    for (const [entry, target] of Object.entries(manifest.exports)) {
      if (entry === './package.json') continue;
      expect(target).toEqual({
        types: expect.stringMatching(/\.d\.ts$/),
        default: expect.stringMatching(/\.js$/),
      });
      if (typeof target !== 'string') targets.push(target.types, target.default);
    }
    expect(
      targets.map((target) => target.replace(/^\.\//, '')).filter((file) => !files.includes(file)),
    ).toEqual([]);
  });

  it('declares every package its code and declarations use, as a dependency or a peer', () => {
    const declared = new Set([
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}),
    ]);
    const undeclared = [...packagesUsed(installed, files)].filter(([name]) => !declared.has(name));
    expect(undeclared.map(([name, file]) => `${name} (in ${file})`)).toEqual([]);
  });

  it("type-checks strictly in the app, under Nest's nodenext settings and under node10 resolution", async () => {
    const [nodenext, node10] = await Promise.all([
      built(),
      run(process.execPath, [tsc(), '-p', 'tsconfig.node10.json'], app),
    ]);
    expect(nodenext).toEqual({ code: 0, output: '' });
    expect(node10).toEqual({ code: 0, output: '' });
  }, 120_000);

  it('boots the app against Redis and runs a job to its result', async () => {
    expectSuccess('tsc', await built());
    const ran = await run(process.execPath, ['dist/main.js'], app, {
      REDIS_URL: redisUrl(),
      QUEUE: uniqueQueue('package'),
    });
    expect(ran.output).toContain('RESULT {"message":"hello scratchhello scratch"}');
    expect(ran.code).toBe(0);
  }, 120_000);

  it('installs the emq command: its shebang runs the built entry against Redis, and it exits', async () => {
    expect(manifest.bin).toEqual({ emq: expect.stringMatching(/^\.\/dist\/.+\.js$/) });
    // Run as a shell runs it: the linked file itself, by its #! line (npm made it executable).
    const ran = await run(join(app, 'node_modules', '.bin', 'emq'), ['stats', '--json'], app, {
      REDIS_URL: redisUrl(),
      EMQ_KEY_PREFIX: uniqueQueue('pkg'),
    });
    expect(ran).toEqual({ code: 0, output: `${JSON.stringify({ queues: [] }, null, 2)}\n` });
  }, 60_000);

  it('opens its entries and keeps deep paths closed, from require and from import', async () => {
    expectSuccess('tsc', await built());
    const open = [
      '@echomq/nestjs',
      '@echomq/nestjs/internal',
      '@echomq/nestjs/health',
      '@echomq/nestjs/package.json',
    ];
    if (hasTesting) open.push('@echomq/nestjs/testing');
    const closed = [
      '@echomq/nestjs/scripts/claim',
      '@echomq/nestjs/dist/scripts/claim.js',
      '@echomq/nestjs/dist/index.js',
    ];
    const checked = await run(
      process.execPath,
      ['dist/entries.js', JSON.stringify([...open, ...closed])],
      app,
    );
    expectSuccess('entries.js', checked);
    expect(JSON.parse(checked.output)).toEqual({
      resolution: Object.fromEntries([
        ...open.map((spec) => [spec, 'resolves']),
        ...closed.map((spec) => [spec, 'ERR_PACKAGE_PATH_NOT_EXPORTED']),
      ]),
      version: manifest.version,
      queueKeys: 'function',
    });

    // An ES module sees the CommonJS build's named exports.
    const esm = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { EchoMqModule, QueueService } from '@echomq/nestjs'; console.log(typeof EchoMqModule, typeof QueueService);",
      ],
      app,
    );
    expect(esm).toEqual({ code: 0, output: 'function function\n' });
  }, 120_000);
});
