# scanrelay: the relay as a container. Config, queue and drive cache live in one volume, /config.
#   docker build -t scanrelay .
#   (both architectures: docker buildx build --platform linux/amd64,linux/arm64 -t scanrelay .)
#   docker run -d --name scanrelay -p 3468:3468 -v /opt/scanrelay:/config scanrelay
# The first start writes a starter /config/config.json; edit it and restart.

# Build stage: better-sqlite3 is a native module, and `npm ci` bundles the relay into dist/ (the "prepare"
# script, esbuild: a dev tool); `npm prune --omit=dev` then leaves better-sqlite3 alone in node_modules, so the
# final image has no compiler, no tsx and no dev dependency. It runs on the platform being built (buildx
# --platform linux/amd64,linux/arm64): the native module must match it.
# SCANRELAY_COMMIT names the commit in --version, the first log line, the dashboard and /metrics
# (docker buildx build --build-arg SCANRELAY_COMMIT=$(git rev-parse --short=12 HEAD) ...): the build context has no .git.
FROM node:20-slim AS build
ARG SCANRELAY_COMMIT=
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY bin ./bin
COPY src ./src
RUN SCANRELAY_COMMIT="$SCANRELAY_COMMIT" npm ci && npm prune --omit=dev && npm cache clean --force

# Run stage: the bundle and the one native module (about 20 MB over node:20-slim: docs/docker.md). Without
# src/ the launcher runs the bundle.
FROM node:20-slim
ENV NODE_ENV=production \
    SCANRELAY_CONFIG=/config/config.json
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
# The image's unprivileged "node" user (uid 1000) owns the volume; run with --user to pick another.
RUN mkdir -p /config && chown node:node /config
USER node
VOLUME /config
EXPOSE 3468
# 3468 is the starter file's port. The check reads SERVER_IP/SERVER_PORT from the same config (and environment
# overrides) as the relay, so a port changed in config.json is checked too; it needs no curl in a slim image.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "bin/scanrelay.js", "health"]
# The same node flags as `npm start`: a 4 MB young generation holds about 20 MB less after a burst of requests,
# for about 5% of intake (bench/README.md, memory).
CMD ["node", "--max-semi-space-size=4", "bin/scanrelay.js", "server"]
