import { CommanderError } from 'commander';
import { EchoMqError } from '../errors';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from './exit-codes';
import type { CliIo } from './io';
import { buildProgram } from './program';
import { RunState } from './session';

export type { CliIo } from './io';

export { EXIT_FAILED, EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE } from './exit-codes';

/** The library's refusals of bad input: the command line was wrong, nothing was sent. */
const BAD_INPUT = new Set(['INVALID_QUEUE_NAME', 'INVALID_JOB_ID', 'INVALID_ARGUMENT']);

/** One line for stderr: the typed error's code and message, no stack. */
function describe(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
  const code =
    error instanceof EchoMqError
      ? error.code
      : typeof (error as { code?: unknown })?.code === 'string'
        ? (error as { code: string }).code
        : 'ERROR';
  return `emq: ${code}: ${message}`;
}

/**
 * Runs the command line on `argv` (the arguments after the program's name) and resolves with
 * its exit code, once every connection it opened is closed. Never throws, never exits the
 * process: the entry (main.ts) sets the exit code, and tests run it in-process.
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const state = new RunState(io);
  try {
    await buildProgram(io, state).parseAsync([...argv], { from: 'user' });
    return state.exitCode;
  } catch (error) {
    // Commander has written its own message (usage errors) or the help text already.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    io.stderr.write(`${describe(error)}\n`);
    return error instanceof EchoMqError && BAD_INPUT.has(error.code) ? EXIT_USAGE : EXIT_FAILED;
  } finally {
    await state.close().catch(() => undefined);
  }
}
