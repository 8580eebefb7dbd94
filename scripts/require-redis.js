#!/usr/bin/env node
// Fails the test run early, with one clear line, when no redis-server can be started.
const { spawnSync } = require('node:child_process');

if (process.env.REDIS_URL) process.exit(0);
const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
if (probe.error || probe.status !== 0) {
  console.error(
    'npm test needs a redis-server binary on the PATH (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis), or REDIS_URL pointing at a Redis to use.',
  );
  process.exit(1);
}
