#!/usr/bin/env bash
# `make lint`'s check of the GitHub Actions workflows (.github/workflows): actionlint, built from
# the Go module proxy once into $OBSERVATORY_CACHE/actionlint/<version>/bin (no replace lines in
# its go.mod, so `go install` works), then run over the workflows. Extra arguments go to actionlint.
set -euo pipefail

ACTIONLINT_VERSION=v1.7.12

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OBSERVATORY_CACHE=${OBSERVATORY_CACHE:-$REPO_ROOT/.cache}
dir=$OBSERVATORY_CACHE/actionlint/$ACTIONLINT_VERSION
actionlint=$dir/bin/actionlint

if [[ ! -x $actionlint ]]; then
  mkdir -p "$OBSERVATORY_CACHE/actionlint"
  work=$(mktemp -d "$OBSERVATORY_CACHE/actionlint/build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "actionlint: building $ACTIONLINT_VERSION (about a minute, once)" >&2
  CGO_ENABLED=0 GOBIN=$work/bin GOFLAGS=-buildvcs=false GOTOOLCHAIN=local \
    go install -trimpath -ldflags "-s -w" "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION" >&2
  mkdir -p "$dir"
  rm -rf "$dir/bin" && mv "$work/bin" "$dir/bin"
fi
cd "$REPO_ROOT"
exec "$actionlint" "$@"
