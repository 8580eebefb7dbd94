#!/usr/bin/env node
// `npm start`: build, make sure a Redis answers at REDIS_URL (starting a local
// redis-server with AOF under .data/ when none does), then run the api and the
// worker until Ctrl-C, which shuts everything down gracefully.
const { spawn, spawnSync } = require('node:child_process');
const { mkdirSync } = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const redisUrl = new URL(process.env.REDIS_URL || 'redis://127.0.0.1:6379');
const redisHost = redisUrl.hostname || '127.0.0.1';
const redisPort = Number(redisUrl.port || 6379);
const children = [];
let stopping = false;

function log(message) {
  console.log(`[start] ${message}`);
}

function redisAnswers() {
  return new Promise((resolve) => {
    const socket = net.connect({ host: redisHost, port: redisPort });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) =>
      done(data.toString().startsWith('+PONG') || data.toString().startsWith('-NOAUTH')),
    );
  });
}

async function waitForRedis(ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await redisAnswers()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

function run(name, command, args, env) {
  const child = spawn(command, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  child.name = name;
  children.push(child);
  log(`${name} started (pid ${child.pid})`);
  child.once('exit', (code, signal) => {
    if (!stopping) {
      log(`${name} exited (${signal || code}); stopping everything`);
      void shutdown(typeof code === 'number' && code !== 0 ? code : 1);
    }
  });
  return child;
}

function exited(child) {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', resolve));
}

async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  log('shutting down');
  // Apps first (they drain their jobs), Redis last so the drain can still write.
  const apps = children.filter((child) => child.name !== 'redis-server');
  for (const child of apps) child.kill('SIGTERM');
  await Promise.all(apps.map(exited));
  const redis = children.find((child) => child.name === 'redis-server');
  if (redis) {
    redis.kill('SIGTERM');
    await exited(redis);
  }
  process.exit(code);
}

async function main() {
  process.once('SIGINT', () => void shutdown(0));
  process.once('SIGTERM', () => void shutdown(0));

  if (process.env.EMQ_SKIP_BUILD !== '1') {
    log('building the api and the worker');
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
    if (build.status !== 0) process.exit(build.status || 1);
  }

  if (await redisAnswers()) {
    log(`using the Redis at ${redisUrl.href}`);
  } else {
    const local = ['127.0.0.1', 'localhost', '::1'].includes(redisHost);
    const probe = spawnSync('redis-server', ['--version']);
    if (!local || probe.error || probe.status !== 0) {
      console.error(
        `[start] Nothing answers at ${redisUrl.href} and no local redis-server can be started. ` +
          'Install one (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis), ' +
          'point REDIS_URL at a Redis, or run the whole system with `docker compose up`.',
      );
      process.exit(1);
    }
    const dir = path.join(root, '.data', 'redis');
    mkdirSync(dir, { recursive: true });
    log(`starting redis-server on port ${redisPort} with AOF in .data/redis`);
    run('redis-server', 'redis-server', [
      '--port',
      String(redisPort),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--save',
      '',
      '--maxmemory-policy',
      'noeviction',
    ]);
    if (!(await waitForRedis(10_000))) {
      console.error('[start] redis-server did not answer within 10 s');
      return shutdown(1);
    }
  }

  const env = { REDIS_URL: redisUrl.href, EMQ_LOG_FORMAT: process.env.EMQ_LOG_FORMAT || 'text' };
  run('api', process.execPath, ['dist/apps/api/main.js'], env);
  run('worker', process.execPath, ['dist/apps/worker/main.js'], env);
  log('api and worker started; Ctrl-C stops everything');
}

void main();
