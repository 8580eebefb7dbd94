import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, platform, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { REPO_ROOT } from './paths';

export interface Versions {
  readonly node: string;
  readonly redisServer: string;
  readonly echomq: string;
  readonly bullmq: string;
  readonly beeQueue: string;
  /** The Redis clients underneath: ioredis (EchoMQ, BullMQ) and node_redis (Bee-Queue). */
  readonly ioredis: string;
  readonly nodeRedis: string;
}

export interface Machine {
  readonly nproc: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly os: string;
  readonly loadAverageAtStart: readonly number[];
}

function packageVersion(packageJson: string): string {
  return (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return '';
  }
}

/** EchoMQ's package version, the commit, and whether libs/echomq differs from it. */
function echomqVersion(): string {
  const version = packageVersion(join(REPO_ROOT, 'libs', 'echomq', 'package.json'));
  const commit = git(['rev-parse', '--short', 'HEAD']);
  if (!commit) return version;
  const dirty = git(['status', '--porcelain', '--', 'libs/echomq']) !== '';
  return `${version} (git ${commit}${dirty ? ', libs/echomq has uncommitted changes' : ''})`;
}

export function versions(redisServer: string): Versions {
  const modules = join(REPO_ROOT, 'node_modules');
  const beeQueueDir = dirname(require.resolve('bee-queue'));
  return {
    node: process.version,
    redisServer,
    echomq: echomqVersion(),
    bullmq: packageVersion(join(modules, 'bullmq', 'package.json')),
    beeQueue: packageVersion(join(modules, 'bee-queue', 'package.json')),
    ioredis: packageVersion(join(modules, 'ioredis', 'package.json')),
    nodeRedis: packageVersion(require.resolve('redis/package.json', { paths: [beeQueueDir] })),
  };
}

function nproc(): number {
  try {
    return Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
  } catch {
    return availableParallelism();
  }
}

export function machine(): Machine {
  return {
    nproc: nproc(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${platform()} ${release()}`,
    loadAverageAtStart: loadavg().map((load) => Math.round(load * 100) / 100),
  };
}
