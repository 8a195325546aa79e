#!/usr/bin/env bash
# Builds the cluster's binaries once from the Go module proxy into $K8S_BIN:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl (one
# `go build`, so shared packages compile once), etcd and CoreDNS. A stamp makes later calls free.
set -euo pipefail
source "$(dirname "$0")/config.sh"

stamp=$K8S_BIN/.complete
want="$K8S_VERSION etcd=$ETCD_VERSION coredns=$COREDNS_VERSION"
if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then exit 0; fi

echo "building Kubernetes $K8S_VERSION, etcd $ETCD_VERSION, CoreDNS $COREDNS_VERSION into $K8S_BIN (cold: ~10 min on 2 cores)"
started=$SECONDS
mkdir -p "$OBSERVATORY_CACHE/kubernetes"  # a cold cache has no such folder yet
work=$(mktemp -d "$OBSERVATORY_CACHE/kubernetes/.build-XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/k8s" "$work/etcd" "$work/bin"
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local

# k8s.io/kubernetes cannot be `go install`ed: its go.mod points the staging modules at
# ./staging/... . A wrapper module replaces each of them with its published v0.N.x release.
staging=${K8S_VERSION/v1./v0.}
(
  cd "$work/k8s"
  go mod init observatory.local/k8s-build >/dev/null 2>&1
  gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^\s*"GoMod": "\(.*\)",\?$/\1/p')
  {
    echo "require k8s.io/kubernetes $K8S_VERSION"
    sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#replace \1 => \1 '"$staging"'#p' "$gomod"
  } >>go.mod
  cat >tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
GO
  go mod tidy >/dev/null
  minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  pkg=k8s.io/component-base/version
  go build -trimpath -o "$work/bin/" \
    -ldflags "-s -w -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet \
    k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubectl
)

# etcd's server module has relative replace lines too: a one-line main in a wrapper module.
(
  cd "$work/etcd"
  go mod init observatory.local/etcd-build >/dev/null 2>&1
  cat >main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null 2>&1
  go mod tidy >/dev/null
  go build -trimpath -ldflags "-s -w" -o "$work/bin/etcd" .
)

# CoreDNS has no replace lines. Built for the cluster's DNS (no `forward`: nothing asked outside);
# static (no cgo), so its image holds the one binary.
CGO_ENABLED=0 GOBIN=$work/bin go install -trimpath -ldflags "-s -w" "github.com/coredns/coredns@$COREDNS_VERSION"

echo "$want" >"$work/bin/.complete"
rm -rf "$K8S_BIN"
mkdir -p "$(dirname "$K8S_BIN")"
mv "$work/bin" "$K8S_BIN"
echo "built in $((SECONDS - started)) s: $(ls "$K8S_BIN" | tr '\n' ' ')"
