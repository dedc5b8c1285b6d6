# The one Graphdock image: `graphdock runtime`, `api`, `operator` (and `dev`, `migrate`) all run
# from it. It runs the compiled JavaScript of `npm run build` with plain node (tsx is loaded only
# to import a project's graphs written in TypeScript).
#   docker build -t graphdock:0.1.0 .
#   docker run --rm graphdock:0.1.0 --help
# With no command it serves examples/langgraph.json (`runtime`, DATABASE_URL required); an image of
# a project's graphs (`graphdock dockerfile`) builds on this one and serves its own config.
# Node 24, the active LTS line (20 reached its end of life in April 2026). The code also runs on
# 20.19+; tests and benchmarks that must run as the image does fetch this exact release
# (scripts/image-node.ts).
ARG NODE_VERSION=24.21.0

# Stage 1: production dependencies only, installed exactly from the lockfile.
FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# `postinstall` marks the tree with the lockfile's digest using this script.
COPY scripts/ensure-install.mjs scripts/ensure-install.mjs
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# Stage 2: `npm run build` (esbuild, a development dependency) compiles the sources to dist/.
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/ensure-install.mjs scripts/ensure-install.mjs
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.ts scripts/build.ts
COPY bin ./bin
COPY cli ./cli
COPY common ./common
COPY runtime ./runtime
COPY api ./api
COPY traces ./traces
COPY exports ./exports
COPY operator ./operator
RUN npm run build

# Stage 3: the runtime image, non-root, read-only to the process: the bundle at /app (/app/cli
# entries, /app/chunks, the migrations beside /app/runtime etc., /app/bin/graphdock.mjs and dist's
# package.json), no TypeScript of Graphdock's own; node_modules for the packages left external.
FROM node:${NODE_VERSION}-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./
COPY crds ./crds
COPY examples ./examples
# A project under /deps (where `graphdock dockerfile` puts it) that has no package.json of its own
# resolves @langchain/langgraph and the rest from Graphdock's packages.
RUN mkdir /deps && ln -s /app/node_modules /deps/node_modules
# V8's compile cache of what a runtime loads (bin/module-caches.mjs): filled by loading the
# runtime's modules and the examples' graphs once, as the user that runs them (Node keeps one cache
# per release and user id) and with the ENTRYPOINT's flags. Unwritable at run time (a read-only
# root file system), it is still read; a pod of another user id goes without.
RUN mkdir /app/compile-cache && chown 1000:1000 /app/compile-cache
# The `node` user of the base image (uid/gid 1000), matching the chart's securityContext.
USER 1000:1000
RUN node --no-memory-reducer /app/bin/graphdock.mjs warm-up --config /app/examples/langgraph.json
EXPOSE 8000 8080 8081
# No memory reducer: V8 otherwise shrinks an idle server's heap, and the first seconds of the next
# burst of runs then go to garbage collection (about a quarter fewer runs/s after a 30 s pause).
# The runtime trims its own heap instead, after its start and after a long idle period
# (GRAPHDOCK_IDLE_TRIM_SECS).
ENTRYPOINT ["node", "--no-memory-reducer", "/app/bin/graphdock.mjs"]
CMD ["runtime", "--config", "/app/examples/langgraph.json"]
