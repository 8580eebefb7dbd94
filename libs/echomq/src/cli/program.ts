import { Command } from 'commander';
import { browseCommand } from './commands/browse';
import { doctorCommand } from './commands/doctor';
import { jobCommand } from './commands/job';
import { pauseCommands } from './commands/pause';
import { removeCommand } from './commands/remove';
import { retryCommand } from './commands/retry';
import { statsCommand } from './commands/stats';
import { integerOption } from './arguments';
import type { CliIo } from './io';
import { DEFAULT_TIMEOUT_MS, DEFAULT_URL, packageVersion, type RunState } from './session';

/**
 * A usage error as one line, shaped like every other error (`emq: <CODE>: <message>`):
 * commander's "error: unknown command 'x'" and its "(Did you mean stats?)" on the next line
 * become `emq: USAGE: unknown command 'x' (Did you mean stats?)`.
 */
export function usageLine(text: string): string {
  const message = text
    .trim()
    .replace(/^error:\s*/, '')
    .replace(/\s*\n\s*/g, ' ');
  return `emq: USAGE: ${message}\n`;
}

/**
 * The `emq` program: global options, then one subcommand per file in commands/. Commander
 * throws instead of exiting (exitOverride), so run() decides the exit code, and writes where
 * the run's io says.
 */
export function buildProgram(io: CliIo, state: RunState): Command {
  const program = new Command('emq')
    .description('Look at and administer EchoMQ queues on a live Redis.')
    .version(packageVersion(), '-V, --version', 'the version of EchoMQ')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => write(usageLine(text)),
    })
    .option(
      '--url <url>',
      `Redis URL, redis:// or rediss:// for TLS (default: $REDIS_URL, else ${DEFAULT_URL})`,
    )
    .option('--prefix <prefix>', "the application's keyPrefix (default: $EMQ_KEY_PREFIX, else emq)")
    .option(
      '--timeout <ms>',
      `deadline of each Redis command, 100 to 120000 (default: ${DEFAULT_TIMEOUT_MS})`,
      integerOption(100, 120_000),
    )
    .option('--json', 'print the result as JSON on stdout')
    .option('--no-color', 'no colours, even in a terminal (NO_COLOR does the same)')
    .showSuggestionAfterError();
  statsCommand(program, state);
  browseCommand(program, state);
  jobCommand(program, state);
  retryCommand(program, state);
  removeCommand(program, state);
  pauseCommands(program, state);
  doctorCommand(program, state);
  return program;
}
