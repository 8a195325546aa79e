#!/usr/bin/env bash
# Builds the pinned Traefik v3 (the ingress and Gateway API controller the cluster suites route
# through) from the Go module proxy with go-tool.sh, packs it as a one-layer image archive in
# $OBSERVATORY_CACHE/traefik/<version>, and prints the archive's path. Idempotent: a cached
# archive returns at once.
# Traefik's go.mod has replace lines (forks of two libraries), which go-tool.sh's wrapper module
# repeats. v3.7 adds a replace to a nested module of its own repository (dynamic/ext) that the
# proxy does not serve, so v3.6 is the newest that builds.
set -euo pipefail

TRAEFIK_VERSION=v3.6.12
TRAEFIK_IMAGE=localhost/observatory/traefik:$TRAEFIK_VERSION

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OBSERVATORY_CACHE=${OBSERVATORY_CACHE:-$here/../.cache}
out=$OBSERVATORY_CACHE/traefik/$TRAEFIK_VERSION/traefik.tar

if [[ ! -f $out ]]; then
  bin=$("$here/go-tool.sh" --ldflags "-X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION" \
    "github.com/traefik/traefik/v3@$TRAEFIK_VERSION" ./cmd/traefik)
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  chmod 755 "$root"
  cp "$bin/traefik" "$root/traefik"
  "$here/cluster/oci-image.sh" "$TRAEFIK_IMAGE" "$root" '["/traefik"]' "$out"
fi
echo "$out"
