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
# The library's own dependencies, as its package.json pins them (croner, ...), beside the peers.
own="$(node -e 'const d = require(process.argv[1]).dependencies || {}; console.log(Object.entries(d).map(([n, v]) => `${n}@${v}`).join(" "))' "$root/libs/echomq/package.json")"
# shellcheck disable=SC2086 # one word per dependency
npm install --no-audit --no-fund --silent @nestjs/common@12 @nestjs/core@12 @nestjs/schedule@12 reflect-metadata rxjs ioredis@5 $own >/dev/null
cp "$root/scripts/compat/nest12-smoke.cjs" "$work/"
node "$work/nest12-smoke.cjs" "$work/echomq"
