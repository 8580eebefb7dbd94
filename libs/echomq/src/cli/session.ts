import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { assertKeyPrefix, DEFAULT_KEY_PREFIX } from '../keyspace';
import type { QueueService } from '../queue/queue.service';
import type { ScriptedClient } from '../scripts';
import { connect, type Connection, type ConnectionSettings } from './connect';
import { Output, type CliIo } from './io';

export const DEFAULT_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_TIMEOUT_MS = 5_000;

/** The global options, as commander parsed them (defaults are resolved in settings()). */
interface GlobalOptions {
  readonly url?: string;
  readonly prefix?: string;
  readonly timeout?: number;
  readonly json?: boolean;
  readonly color?: boolean;
}

/** What a command works with: the library's QueueService and the output its options chose. */
export interface Session {
  readonly queues: QueueService;
  /** The connection under QueueService, for reads that span queues. */
  readonly redis: ScriptedClient;
  readonly out: Output;
}

/**
 * One run of the command line: the connection, opened by the first command that needs it (help
 * and usage errors need none) and closed when the run ends, and the exit code the command chose.
 */
export class RunState {
  exitCode = 0;
  private connection?: Connection;

  constructor(readonly io: CliIo) {}

  output(command: Command): Output {
    const options = command.optsWithGlobals<GlobalOptions>();
    return new Output(this.io, options.json === true, options.color !== false);
  }

  /**
   * Connection settings: the options, else the environment (REDIS_URL, EMQ_KEY_PREFIX), else the
   * defaults. Defaults are not commander's, so `--help` never prints a URL with its password.
   */
  settings(command: Command): ConnectionSettings {
    const options = command.optsWithGlobals<GlobalOptions>();
    const env = this.io.env;
    return {
      url: options.url ?? (env.REDIS_URL || DEFAULT_URL),
      prefix: assertKeyPrefix(options.prefix ?? (env.EMQ_KEY_PREFIX || DEFAULT_KEY_PREFIX)),
      timeoutMs: options.timeout ?? DEFAULT_TIMEOUT_MS,
    };
  }

  async session(command: Command): Promise<Session> {
    const out = this.output(command);
    this.connection ??= await connect(this.settings(command));
    return { queues: this.connection.queues, redis: this.connection.redis, out };
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    await connection?.close();
  }
}

/**
 * A commander action that runs `fn` with a session: commander passes the positional arguments,
 * then the command's options, then the command itself. `fn` returns the exit code (0 when void).
 */
export function act<A extends unknown[]>(
  state: RunState,
  fn: (session: Session, ...args: A) => Promise<number | void>,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]): Promise<void> => {
    const command = args[args.length - 1] as Command;
    const session = await state.session(command);
    state.exitCode = (await fn(session, ...(args.slice(0, -1) as A))) ?? 0;
  };
}

/** The package's version, read off its manifest (two levels up in the sources and in the build). */
export function packageVersion(): string {
  try {
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      version?: unknown;
    };
    return typeof manifest.version === 'string' ? manifest.version : 'unknown';
  } catch {
    return 'unknown';
  }
}
