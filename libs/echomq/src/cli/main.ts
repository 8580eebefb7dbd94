#!/usr/bin/env node
// The `emq` command (the package's bin): docs/cli.md.
import 'reflect-metadata';
import { run } from './run';

void run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then(
  (code) => {
    // Not process.exit(): it could cut off output still on its way to a pipe. Every
    // connection is closed by now, so the process ends by itself.
    process.exitCode = code;
  },
);
