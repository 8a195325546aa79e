#!/usr/bin/env bash
# Builds the cluster's NetworkPolicy enforcer, kube-router in firewall-only mode, from the Go
# module proxy with go-tool.sh, against the cluster's k8s.io modules (--k8s), into
# $OBSERVATORY_CACHE/kube-router/<version>-k8s<K8S_VERSION>/bin and prints the binary's path.
# Idempotent: a cached binary returns at once.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"
bin=$(OBSERVATORY_CACHE=$OBSERVATORY_CACHE "$here/../install/go-tool.sh" --k8s "$K8S_VERSION" \
  "github.com/cloudnativelabs/kube-router/v2@$KUBE_ROUTER_VERSION" ./cmd/kube-router)
echo "$bin/kube-router"
