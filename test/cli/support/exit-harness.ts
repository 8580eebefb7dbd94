// The `emq` entry as main.ts runs it, plus one probe: once the command has resolved, nothing
// should keep the process alive. An unref'd timer cannot keep it alive itself, so it fires only
// if something else does, and then says so on stdout before the process ends.
import 'reflect-metadata';
import { run } from '../../../libs/echomq/src/cli/run';

const lingerMarkMs = Number(process.env.EMQ_LINGER_MARK_MS ?? '3000');

void run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then(
  (code) => {
    process.exitCode = code;
    setTimeout(() => process.stdout.write('LINGERED\n'), lingerMarkMs).unref();
  },
);
