#!/usr/bin/env bash
# Builds the pinned Traefik v3 (the ingress and Gateway API controller the cluster suites route
# through) from the Go module proxy into $OBSERVATORY_CACHE/traefik/<version>, packs it as a
# one-layer image archive, and prints the archive's path. Idempotent: a cached archive returns at once.
# Traefik's go.mod has replace lines (forks of two libraries), so `go install` refuses: a wrapper
# module requires it and repeats those replace lines. v3.7 adds a replace to a nested module of
# its own repository (dynamic/ext) that the proxy does not serve, so v3.6 is the newest that builds.
set -euo pipefail

TRAEFIK_VERSION=v3.6.12
TRAEFIK_IMAGE=localhost/observatory/traefik:$TRAEFIK_VERSION

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OBSERVATORY_CACHE=${OBSERVATORY_CACHE:-$here/../.cache}
dir=$OBSERVATORY_CACHE/traefik/$TRAEFIK_VERSION
out=$dir/traefik.tar

if [[ ! -f $out ]]; then
  mkdir -p "$dir"
  work=$(mktemp -d "$dir/.build-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "install-traefik: building Traefik $TRAEFIK_VERSION (several minutes, once)" >&2
  started=$SECONDS
  export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local CGO_ENABLED=0
  (
    cd "$work"
    go mod init observatory.local/traefik-build >/dev/null 2>&1
    gomod=$(go mod download -json "github.com/traefik/traefik/v3@$TRAEFIK_VERSION" | sed -n 's/^\s*"GoMod": "\(.*\)",\?$/\1/p')
    {
      echo "require github.com/traefik/traefik/v3 $TRAEFIK_VERSION"
      # The replace block, as it stands in Traefik's go.mod (module => module version lines only).
      awk '/^replace \($/ {r = 1; print; next} r && /^\)/ {print; r = 0; next} r' "$gomod"
    } >>go.mod
    printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/traefik/traefik/v3/cmd/traefik"\n' >tools.go
    go mod tidy >/dev/null 2>&1 || go mod tidy
    pkg=github.com/traefik/traefik/v3/pkg/version
    go build -trimpath -o "$work/root/traefik" \
      -ldflags "-s -w -X $pkg.Version=$TRAEFIK_VERSION" github.com/traefik/traefik/v3/cmd/traefik
  ) >&2
  chmod 755 "$work/root"
  "$here/cluster/oci-image.sh" "$TRAEFIK_IMAGE" "$work/root" '["/traefik"]' "$out"
  echo "install-traefik: built in $((SECONDS - started)) s" >&2
fi
echo "$out"
