#!/usr/bin/env bash
# Checks that the library, compiled as CommonJS, runs under NestJS 12 (ESM-only):
# builds it into a scratch folder, installs NestJS 12 there from the registry, and
# runs one job end to end on a throwaway redis-server.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$root"
npx tsc -p libs/echomq/tsconfig.lib.json --outDir "$work/echomq"
cd "$work"
npm init -y >/dev/null
npm install --no-audit --no-fund --silent @nestjs/common@12 @nestjs/core@12 @nestjs/schedule@12 reflect-metadata rxjs ioredis@5 >/dev/null
cp "$root/scripts/compat/nest12-smoke.cjs" "$work/"
node "$work/nest12-smoke.cjs" "$work/echomq"
