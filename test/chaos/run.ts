/**
 * The fault battery: `npm run chaos` runs every scenario at its full size, `npm run chaos --
 * --quick` at the sizes CI runs, `--only a,b` a few, `--<scenario>-<param> <n>` one size, and
 * `--list` prints them. Each scenario starts its own Redis and worker processes on loopback,
 * prints one line of figures on stdout, and the run exits 1 when any promise was broken
 * (2 on a bad flag).
 */
import './support/aliases';
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCENARIOS } from './scenarios';
import type { Scenario } from './scenario';

interface Flags {
  quick: boolean;
  list: boolean;
  keep: boolean;
  only?: string[];
  sizes: Map<string, number>;
}

function usage(problem: string): never {
  console.error(`chaos: ${problem}`);
  console.error(
    'usage: npm run chaos -- [--quick] [--only a,b] [--keep] [--list] [--<scenario>-<param> <n>]',
  );
  process.exit(2);
}

function parseFlags(argv: readonly string[]): Flags {
  const flags: Flags = { quick: false, list: false, keep: false, sizes: new Map() };
  const known = new Map<string, true>();
  for (const scenario of SCENARIOS)
    for (const param of Object.keys(scenario.params)) known.set(`${scenario.name}-${param}`, true);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') flags.quick = true;
    else if (arg === '--list') flags.list = true;
    else if (arg === '--keep') flags.keep = true;
    else if (arg === '--only') {
      const names = (argv[++i] ?? '').split(',').filter(Boolean);
      const unknown = names.filter((name) => !SCENARIOS.some((scenario) => scenario.name === name));
      if (names.length === 0 || unknown.length > 0)
        usage(`--only needs scenario names; unknown: ${unknown.join(', ') || '(none given)'}`);
      flags.only = names;
    } else if (arg.startsWith('--') && known.has(arg.slice(2))) {
      const value = Number(argv[++i]);
      if (!Number.isFinite(value) || value < 0) usage(`${arg} needs a number, got ${argv[i]}`);
      flags.sizes.set(arg.slice(2), value);
    } else usage(`unknown flag ${arg}`);
  }
  return flags;
}

function formatLine(
  name: string,
  passed: boolean,
  figures: Readonly<Record<string, number | string>>,
  seconds: number,
): string {
  const parts = Object.entries(figures).map(([key, value]) => `${key}=${value}`);
  return `chaos ${name}: ${passed ? 'PASS' : 'FAIL'} ${parts.join(' ')} time=${seconds.toFixed(1)}s`;
}

async function runOne(scenario: Scenario, flags: Flags): Promise<boolean> {
  const params: Record<string, number> = {};
  for (const [param, sizes] of Object.entries(scenario.params)) {
    params[param] = flags.sizes.get(`${scenario.name}-${param}`) ?? (flags.quick ? sizes.quick : sizes.full);
  }
  const workDir = mkdtempSync(join(tmpdir(), `echomq-chaos-${scenario.name}-`));
  const started = Date.now();
  const log = (message: string): void => {
    console.error(`  [${scenario.name} +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}`);
  };
  log(
    `${scenario.summary} (${Object.entries(params)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}; work dir ${workDir})`,
  );
  let passed: boolean;
  try {
    const outcome = await scenario.run({ params, quick: flags.quick, workDir, log });
    passed = outcome.broken.length === 0;
    console.log(formatLine(scenario.name, passed, outcome.figures, (Date.now() - started) / 1000));
    for (const promise of outcome.broken) console.log(`  broken: ${promise}`);
  } catch (error) {
    passed = false;
    console.log(formatLine(scenario.name, false, {}, (Date.now() - started) / 1000));
    console.log(`  broken: the scenario itself failed: ${(error as Error).stack ?? String(error)}`);
  }
  if (passed && !flags.keep) rmSync(workDir, { recursive: true, force: true });
  else log(`kept ${workDir}`);
  return passed;
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  if (flags.list) {
    for (const scenario of SCENARIOS) {
      console.log(`${scenario.name}: ${scenario.summary}`);
      for (const [param, sizes] of Object.entries(scenario.params))
        console.log(
          `  --${scenario.name}-${param} <n>  ${sizes.doc} (full ${sizes.full}, quick ${sizes.quick})`,
        );
    }
    return;
  }
  const chosen = SCENARIOS.filter((scenario) => !flags.only || flags.only.includes(scenario.name));
  const started = Date.now();
  let failures = 0;
  for (const scenario of chosen) if (!(await runOne(scenario, flags))) failures += 1;
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(
    `chaos: ${chosen.length - failures} of ${chosen.length} scenarios passed${flags.quick ? ' (quick)' : ''} in ${seconds}s`,
  );
  process.exit(failures === 0 ? 0 : 1);
}

void main();
