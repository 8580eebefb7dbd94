# syntax=docker/dockerfile:1
# One image for both apps: the api by default, the worker with
#   docker run echomq node dist/apps/worker/main.js     (or --build-arg APP=worker)
ARG NODE_VERSION=20

# --- build: full install (the Nest CLI, webpack and TypeScript are dev dependencies) ---
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY nest-cli.json tsconfig.json ./
COPY libs ./libs
COPY apps ./apps
# webpack bundles each app (and the library, Lua included) into dist/apps/<app>/main.js;
# node_modules stay external, so the runtime stage installs production dependencies.
RUN npm run build

# --- production dependencies only ---
FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# --- runtime ---
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ARG APP=api
ENV NODE_ENV=production \
    EMQ_APP=${APP}
WORKDIR /app
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node package.json ./
USER node
EXPOSE 3000
# exec: node becomes PID 1's direct child under `init: true` (or PID 1 itself) and receives
# SIGTERM, which both apps turn into a graceful shutdown.
CMD ["sh", "-c", "exec node \"dist/apps/${EMQ_APP}/main.js\""]
