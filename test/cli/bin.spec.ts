import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { EchoMqModule, QueueService } from '@app/echomq';
import { queueKeys } from '@app/echomq/internal';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import { uniquePrefix } from './support/cli';

const ROOT = join(__dirname, '..', '..');
const ENTRY = join(ROOT, 'libs', 'echomq', 'src', 'cli', 'main.ts');

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The real entry as a process (`emq` from the sources, through ts-node as the root script runs
 * it). execFile's timeout turns a process that does not exit after its command (a connection
 * left open) into a failure.
 */
function spawnEmq(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Exit> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', ENTRY, ...args],
      {
        cwd: ROOT,
        env: { ...process.env, TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'), NO_COLOR: '', ...env },
        timeout: 50_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('the emq entry, run as a process', () => {
  const prefix = uniquePrefix();
  const queue = uniqueQueue('bin');
  let redis: Redis;

  beforeAll(async () => {
    redis = connect();
    @Module({
      imports: [EchoMqModule.forRoot({ connection: { url: redisUrl() }, keyPrefix: prefix, nodeId: 11 })],
    })
    class Producer {}
    const app = await NestFactory.createApplicationContext(Producer, { logger: ['error'] });
    const queues = app.get(QueueService);
    const [, broken] = await queues.enqueueMany(queue, [{ data: 1 }, { data: 2 }]);
    await app.close();
    await redis.del(queueKeys(queue, prefix).job(broken));
  });

  afterAll(() => {
    redis?.disconnect();
  });

  it('starts with a shebang, so the package can name it as its bin', () => {
    expect(readFileSync(ENTRY, 'utf8').split('\n', 1)[0]).toBe('#!/usr/bin/env node');
  });

  it('runs a command, prints its result and exits with its code once done (1: doctor found a problem)', async () => {
    // REDIS_URL and EMQ_KEY_PREFIX stand in for --url and --prefix. (One process only: loading
    // the sources through ts-node takes seconds; the exit codes are covered in-process.)
    const doctor = await spawnEmq(['doctor', queue, '--json'], {
      REDIS_URL: redisUrl(),
      EMQ_KEY_PREFIX: prefix,
    });
    expect(doctor).toMatchObject({ code: 1, stderr: '' });
    const report = JSON.parse(doctor.stdout) as { queues: { queue: string; findings: { kind: string }[] }[] };
    expect(report.queues).toEqual([
      expect.objectContaining({ queue, findings: [expect.objectContaining({ kind: 'member-without-row' })] }),
    ]);
  }, 60_000);
});
