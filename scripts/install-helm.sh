#!/usr/bin/env bash
# Builds the pinned Helm from source with `go install` (helm.sh/helm/v4 has no replace lines; no
# release download is reachable here) into $OBSERVATORY_CACHE/helm/<version>/bin and prints the
# binary's path. Idempotent: a cached binary returns at once.
# No version stamp is needed: Helm v4 takes its default .Capabilities.KubeVersion (used by
# `helm template` and `helm lint`) from the client-go it is built with (v0.37 -> v1.37), which
# satisfies the chart's `kubeVersion: >=1.30.0-0`; `helm install` asks the cluster.
set -euo pipefail

HELM_VERSION=v4.3.1

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OBSERVATORY_CACHE=${OBSERVATORY_CACHE:-$REPO_ROOT/.cache}
dir=$OBSERVATORY_CACHE/helm/$HELM_VERSION
helm=$dir/bin/helm

if [ ! -x "$helm" ]; then
  mkdir -p "$OBSERVATORY_CACHE/helm"
  work=$(mktemp -d "$OBSERVATORY_CACHE/helm/build.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "install-helm: building Helm $HELM_VERSION (a few minutes, once)" >&2
  CGO_ENABLED=0 GOBIN=$work/bin go install -trimpath -ldflags "-s -w" "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" >&2
  mkdir -p "$dir"
  rm -rf "$dir/bin" && mv "$work/bin" "$dir/bin"
fi
echo "$helm"
