#!/usr/bin/env bash
# Builds the cluster's NetworkPolicy enforcer, kube-router in firewall-only mode, from the Go
# module proxy into $OBSERVATORY_CACHE/kube-router/<version>/bin and prints the binary's path.
# Idempotent: a cached binary returns at once. No replace lines in its go.mod: `go install` works.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"
dir=$OBSERVATORY_CACHE/kube-router/$KUBE_ROUTER_VERSION
bin=$dir/bin/kube-router

if [[ ! -x $bin ]]; then
  mkdir -p "$dir"
  work=$(mktemp -d "$dir/.build-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "building kube-router $KUBE_ROUTER_VERSION (a few minutes, once)" >&2
  started=$SECONDS
  CGO_ENABLED=0 GOBIN=$work/bin GOFLAGS=-buildvcs=false GOTOOLCHAIN=local \
    go install -trimpath -ldflags "-s -w" "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION" >&2
  rm -rf "$dir/bin" && mv "$work/bin" "$dir/bin"
  echo "built kube-router in $((SECONDS - started)) s" >&2
fi
echo "$bin"
