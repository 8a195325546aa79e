#!/usr/bin/env bash
# Builds the cluster's NetworkPolicy enforcer, kube-router in firewall-only mode, from the Go
# module proxy with go-tool.sh into $OBSERVATORY_CACHE/kube-router/<version>/bin and prints the
# binary's path. Idempotent: a cached binary returns at once.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"
bin=$(OBSERVATORY_CACHE=$OBSERVATORY_CACHE "$here/../install/go-tool.sh" \
  "github.com/cloudnativelabs/kube-router/v2@$KUBE_ROUTER_VERSION" ./cmd/kube-router)
echo "$bin/kube-router"
