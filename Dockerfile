# One image per component of the platform, from one file: `docker build --target <component> .`
# (ingest, consumer, search, jobs, controller)
# (`make images` builds them all). Stages: manifests -> deps (every dependency, for tsc) -> build
# (dist/) -> modules, apps (per service: its production dependencies and compiled code only) -> one
# final stage per component on `runtime` (node + that tree; non-root; no compiler, no npm, no
# package manager, no sources). Each image runs `/app/start`, written by service-tree.sh from the
# service's `start:prod` script: its node flags are written there only.
# Adding a component: its name in SERVICES and a final stage below.
#
# NODE_IMAGE is the official Node.js LTS slim image, pinned by digest, wherever a registry is
# reachable (a user's CI, the release workflow). On a machine that cannot pull (ours), `make
# images` first builds an equivalent base locally (Debian minbase + the Node binary from npm:
# scripts/images/build-base.sh) and passes it here. The digest is node:24-bookworm-slim at Node
# 24.18.0 as public builds name it; it cannot be checked from the development machines (no
# registry): move it to the Node of scripts/versions.sh where one is reachable, with
# `docker buildx imagetools inspect node:24-bookworm-slim --format '{{.Manifest.Digest}}'`.
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

FROM ${NODE_IMAGE} AS base
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false

# Only the package manifests: the dependency layers below are rebuilt when a manifest or the lock
# file changes, not on every source edit (this stage's output is identical otherwise).
FROM base AS manifests
COPY . /src
RUN sh /src/scripts/images/copy-manifests.sh /src /manifests

# `npm ci`: exactly the lock file's versions, or a failure when package.json and the lock disagree.
# Install scripts are skipped (none is needed to compile or run); patches/ is applied explicitly.
# The optional secret `extra_ca` is a CA bundle for a TLS-inspecting proxy between npm and its
# registry (`make images` passes $NODE_EXTRA_CA_CERTS when set); it never lands in a layer.
FROM base AS deps
COPY --from=manifests /manifests/ ./
COPY patches/ patches/
RUN --mount=type=secret,id=extra_ca,required=false \
    export NODE_EXTRA_CA_CERTS=/run/secrets/extra_ca; [ -f "$NODE_EXTRA_CA_CERTS" ] || unset NODE_EXTRA_CA_CERTS; \
    npm ci --no-audit --no-fund --ignore-scripts && npx patch-package --error-on-fail && rm -rf /root/.npm

FROM deps AS build
ARG SERVICES="ingest consumer search jobs controller"
COPY tsconfig.json tsconfig.base.json ./
COPY packages/ packages/
COPY services/ services/
COPY migrations/ migrations/
# Only the compiled output leaves this stage (/out: dist/ of every built workspace, migrations/).
RUN npx tsc -b $(for s in $SERVICES; do echo "services/$s"; done) \
 && for d in packages/* services/*; do if [ -d "$d/dist" ]; then mkdir -p "/out/$d" && cp -r "$d/dist" "/out/$d/"; fi; done \
 && cp -r migrations /out/

# Per service: production dependencies only (cached until a manifest or the lock changes), then
# the compiled code of the service and of the workspace packages it depends on.
FROM base AS modules
ARG SERVICES="ingest consumer search jobs controller"
COPY --from=manifests /manifests/ /manifests/
COPY patches/ /manifests/patches/
COPY scripts/images/service-tree.sh /usr/local/bin/
RUN --mount=type=secret,id=extra_ca,required=false \
    export NODE_EXTRA_CA_CERTS=/run/secrets/extra_ca; [ -f "$NODE_EXTRA_CA_CERTS" ] || unset NODE_EXTRA_CA_CERTS; \
    for s in $SERVICES; do service-tree.sh modules "$s" /manifests; done && rm -rf /root/.npm

FROM modules AS apps
ARG SERVICES="ingest consumer search jobs controller"
COPY --from=build /out/ /build/
RUN for s in $SERVICES; do service-tree.sh dist "$s" /build; done && rm -rf /build

# The runtime root filesystem: the base without what only installs or builds software (npm,
# corepack, yarn, apt and the libraries only apt uses (bookworm's names; dpkg skips a name that is
# not installed), perl, and e2fsprogs with its libraries: a container never makes or checks a
# file system), squashed into one layer by the `runtime` stage so what is removed is
# really gone (a removal in a later layer would only hide it). No package can be installed in the
# final images: they are rebuilt from this file instead.
FROM base AS runtime-root
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
      /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-* /usr/local/include \
 && dpkg --purge --force-remove-essential --force-depends >/dev/null \
      apt libapt-pkg6.0 gpgv debian-archive-keyring perl-base \
      libgnutls30 libp11-kit0 libunistring2 libhogweed6 libnettle8 libtasn1-6 libidn2-0 libxxhash0 \
      e2fsprogs logsave libext2fs2 libss2 libcom-err2 \
 && rm -rf /var/lib/apt /var/cache/apt /var/cache/debconf /var/log/* /tmp/*

# What every component's image starts from: non-root by number (1000 = `node` of the base image),
# since Kubernetes' runAsNonRoot can only verify a numeric user.
# MALLOC_ARENA_MAX=2: two glibc malloc arenas instead of up to eight per core, each keeping its
# high-water mark (services/ingest/README.md, "Node flags and the allocator"); devstack's
# PRODUCTION_ENV is the same list, so local processes and the benchmarks run as the image does.
FROM scratch AS runtime
COPY --from=runtime-root / /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin NODE_ENV=production MALLOC_ARENA_MAX=2
WORKDIR /app
USER 1000:1000

FROM runtime AS ingest
COPY --from=apps /apps/ingest/ ./
# The API or probes; 9464 the metrics listener (METRICS_PORT).
EXPOSE 8080 9464
CMD ["/app/start"]

FROM runtime AS consumer
COPY --from=apps /apps/consumer/ ./
# Probes; 8081 the admin API (ADMIN_PORT); 9464 the metrics listener (METRICS_PORT).
EXPOSE 8080 8081 9464
CMD ["/app/start"]

FROM runtime AS search
COPY --from=apps /apps/search/ ./
# The API or probes; 9464 the metrics listener (METRICS_PORT).
EXPOSE 8080 9464
CMD ["/app/start"]

# A CronJob's container: `args: [partition-maintenance]` or `[rollup-refresh]`; runs once, exits.
FROM runtime AS jobs
COPY --from=apps /apps/jobs/ ./
ENTRYPOINT ["/app/start"]

# The Pipeline controller (two replicas, one leader); talks to the API server and Kafka only.
FROM runtime AS controller
COPY --from=apps /apps/controller/ ./
# The API or probes; 9464 the metrics listener (METRICS_PORT).
EXPOSE 8080 9464
CMD ["/app/start"]
