#!/usr/bin/env bash
# Builds the API server alone of Kubernetes <version> (v1.N.x) from the Go module proxy, once, and
# prints its folder ($OBSERVATORY_CACHE/kube-apiserver/<version>/bin): what `make test-api-lines`
# starts beside the cluster's etcd to check the chart against the older supported lines
# (K8S_OLDER_LINES in scripts/versions.sh), with none of a cluster's other parts.
#
#   build-apiserver.sh <version>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"
export OBSERVATORY_CACHE
version=${1:-}
[[ $version =~ ^v1\.([0-9]+)\.[0-9]+$ ]] || { echo "usage: build-apiserver.sh v1.N.x" >&2; exit 2; }
minor=${BASH_REMATCH[1]}
v=k8s.io/component-base/version
# The staging modules are numbered v0.N.x for v1.N.x, as build-binaries.sh builds the cluster.
exec "$here/../install/go-tool.sh" --name kube-apiserver --nested "${version/v1./v0.}" \
  --ldflags "-X $v.gitVersion=$version -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean" \
  "k8s.io/kubernetes@$version" ./cmd/kube-apiserver
