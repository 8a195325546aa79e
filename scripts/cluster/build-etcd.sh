#!/usr/bin/env bash
# Builds etcd (ETCD_VERSION) once from the Go module proxy (../install/go-tool.sh) and prints its
# folder, $OBSERVATORY_CACHE/etcd/<version>/bin, whose binary is `server` (etcd's server module is
# its main package): for the cluster (build-binaries.sh) and for an API server run alone
# (e2e/api-lines), without building the rest of a cluster.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"
export OBSERVATORY_CACHE
exec "$here/../install/go-tool.sh" --name etcd "go.etcd.io/etcd/server/v3@$ETCD_VERSION" go.etcd.io/etcd/server/v3
