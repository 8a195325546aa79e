#!/usr/bin/env bash
# Builds the pinned Helm (HELM_VERSION of ../versions.sh) from the Go module proxy with
# go-tool.sh (no release download is reachable here) into
# $OBSERVATORY_CACHE/helm/<version>-k8s<K8S_VERSION>/bin, against the k8s.io modules of the
# cluster's Kubernetes (go-tool.sh --k8s: Helm asks for the same minor), and prints the binary's
# path. Idempotent: a cached binary returns at once.
# No version stamp is needed: Helm v4 takes its default .Capabilities.KubeVersion (used by
# `helm template` and `helm lint`) from the client-go it is built with (v0.37 -> v1.37), which
# satisfies the chart's `kubeVersion: >=1.30.0-0`; `helm install` asks the cluster.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../versions.sh
source "$here/../versions.sh"
bin=$("$here/go-tool.sh" --k8s "$K8S_VERSION" "helm.sh/helm/v4@$HELM_VERSION" ./cmd/helm)
echo "$bin/helm"
