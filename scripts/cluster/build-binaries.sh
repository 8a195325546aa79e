#!/usr/bin/env bash
# Builds the cluster's binaries once from the Go module proxy (../install/go-tool.sh) into $K8S_BIN:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl (one
# `go build`, so shared packages compile once), etcd and CoreDNS. A stamp makes later calls free.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"
export OBSERVATORY_CACHE

stamp=$K8S_BIN/.complete
want="$K8S_VERSION etcd=$ETCD_VERSION coredns=$COREDNS_VERSION:$(sha256sum <"$here/coredns/main.go" | cut -c1-12)"
built() { [[ -f $stamp && $(cat "$stamp") == "$want" ]]; }
built && exit 0
# One build at a time per cache (scripts/test/prebuild.sh may be building it): wait, then look again.
# The lock is outside $K8S_BIN, which go-tool.sh replaces whole.
mkdir -p "$OBSERVATORY_CACHE"
exec 9>"$OBSERVATORY_CACHE/.build-binaries-$K8S_VERSION.lock"
flock 9
built && exit 0

echo "building Kubernetes $K8S_VERSION, etcd $ETCD_VERSION, CoreDNS $COREDNS_VERSION into $K8S_BIN (cold: ~12 min on 2 cores)"
started=$SECONDS
go_tool=$here/../install/go-tool.sh
# k8s.io/kubernetes points its staging modules (k8s.io/api, ...) at ./staging/...: the wrapper
# module takes their published releases instead, numbered v0.N.x for v1.N.x. Into
# $OBSERVATORY_CACHE/kubernetes/<version>/bin.
minor=${K8S_VERSION#v1.} && minor=${minor%%.*}
v=k8s.io/component-base/version
k8s=$("$go_tool" --name kubernetes --nested "${K8S_VERSION/v1./v0.}" \
  --ldflags "-X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean" \
  "k8s.io/kubernetes@$K8S_VERSION" ./cmd/kube-apiserver ./cmd/kube-controller-manager ./cmd/kube-scheduler \
  ./cmd/kubelet ./cmd/kube-proxy ./cmd/kubectl)
etcd=$("$here/build-etcd.sh")
# CoreDNS for the cluster's DNS with the plugins its Corefile uses (coredns/main.go; no `forward`:
# nothing asked outside), against the cluster's k8s.io modules, which Go's build cache holds by now.
p=github.com/coredns/coredns
coredns=$("$go_tool" --name coredns-cluster --main "$here/coredns/main.go" --k8s "$K8S_VERSION" "$p@$COREDNS_VERSION" \
  $p/core/dnsserver $p/coremain $p/plugin/cache $p/plugin/errors $p/plugin/health $p/plugin/kubernetes $p/plugin/ready)

mkdir -p "$K8S_BIN"
[[ $k8s -ef $K8S_BIN ]] || cp "$k8s"/* "$K8S_BIN/"
cp "$etcd/server" "$K8S_BIN/etcd"
cp "$coredns/coredns-cluster" "$K8S_BIN/coredns"
echo "$want" >"$stamp"
echo "built in $((SECONDS - started)) s: $(ls "$K8S_BIN" | tr '\n' ' ')"
