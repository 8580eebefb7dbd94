#!/usr/bin/env node
// `npm run pack:lib [-- <out-dir>]`: builds the library as the package users install and
// writes its tarball into dist/ (or <out-dir>). The package is staged in <out-dir>/package:
// the compiled JS and .d.ts under dist/, the manifest from libs/echomq/package.json, the
// README and LICENSE. `npm publish <out-dir>/package` (or the tarball) publishes it.
const { spawnSync } = require('node:child_process');
const { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const lib = path.join(root, 'libs', 'echomq');
const out = path.resolve(process.argv[2] || path.join(root, 'dist'));
const staged = path.join(out, 'package');

function fail(message) {
  console.error(`[pack:lib] ${message}`);
  process.exit(1);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', ...options });
  if (result.error) fail(`${command} could not start: ${result.error.message}`);
  if (result.status !== 0) {
    fail(`${path.basename(command)} ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
  }
  return result.stdout;
}

/** npm itself, the one running this script when there is one. */
function npm(args, cwd) {
  const cli = process.env.npm_execpath;
  return cli && /npm-cli\.js$/.test(cli)
    ? run(process.execPath, [cli, ...args], { cwd })
    : run('npm', args, { cwd, shell: process.platform === 'win32' });
}

/**
 * The published manifest: the source without the notes meant for this repository. The
 * testing kit's entry is dropped while its sources do not exist, so the package can be
 * built either way; every other entry must exist in the build.
 */
function publishedManifest() {
  const manifest = require(path.join(lib, 'package.json'));
  delete manifest['//'];
  delete manifest.private;
  if (!existsSync(path.join(lib, 'src', 'testing', 'index.ts'))) {
    console.log('[pack:lib] libs/echomq/src/testing/index.ts does not exist: packing without ./testing');
    delete manifest.exports['./testing'];
    if (manifest.typesVersions?.['*']) delete manifest.typesVersions['*'].testing;
  }
  const targets = [manifest.main, manifest.types];
  for (const target of Object.values(manifest.exports)) {
    targets.push(...(typeof target === 'string' ? [target] : Object.values(target)));
  }
  for (const target of targets) {
    if (target !== './package.json' && !existsSync(path.join(staged, target))) {
      fail(`package.json points at ${target}, which the build did not write`);
    }
  }
  return manifest;
}

rmSync(staged, { recursive: true, force: true });
mkdirSync(staged, { recursive: true });
const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
run(process.execPath, [
  tsc,
  '-p',
  path.join(lib, 'tsconfig.package.json'),
  '--outDir',
  path.join(staged, 'dist'),
]);
const manifest = publishedManifest();
writeFileSync(path.join(staged, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
copyFileSync(path.join(root, 'README.md'), path.join(staged, 'README.md'));
copyFileSync(path.join(root, 'LICENSE'), path.join(staged, 'LICENSE'));

const [packed] = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', out], staged));
const tarball = path.join(out, packed.filename);
console.log(`[pack:lib] ${packed.id}: ${packed.entryCount} files, ${packed.size} bytes`);
console.log(tarball);
