import { randomBytes } from 'node:crypto';
import { run, type CliIo } from '@app/echomq/cli/run';
import { redisUrl } from '../../support/redis';

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliRunOptions {
  /** Whether stdout claims to be a terminal (colours and tables). Default false. */
  readonly tty?: boolean;
  readonly env?: Record<string, string | undefined>;
}

/** A key prefix no other suite uses, so `emq stats` and `emq doctor` without a queue see this suite's queues only. */
export function uniquePrefix(): string {
  return `cli${randomBytes(5).toString('hex')}`;
}

/**
 * Runs the command line in-process, as `emq <args>` against the suite's Redis under `prefix`,
 * with stdout and stderr captured.
 */
export async function emq(
  prefix: string,
  args: readonly string[],
  options: CliRunOptions = {},
): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: { write: (text: string) => (stdout += text), isTTY: options.tty === true },
    stderr: { write: (text: string) => (stderr += text) },
    env: { ...(options.env ?? {}) },
  };
  const code = await run(['--url', redisUrl(), '--prefix', prefix, ...args], io);
  return { code, stdout, stderr };
}

/** `emq <args> --json`, expecting exit 0, with stdout parsed. */
export async function emqJson<T = unknown>(prefix: string, args: readonly string[]): Promise<T> {
  const result = await emq(prefix, [...args, '--json']);
  if (result.code !== 0) throw new Error(`emq ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}
