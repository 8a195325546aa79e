# shellcheck shell=bash
# shellcheck disable=SC2034 # sourced: the scripts that source it use what they need
# The one place for the cluster's addresses, names and folders; its versions are those of
# scripts/versions.sh. Sourced by every script here.
# shellcheck source=../versions.sh
source "$(dirname "${BASH_SOURCE[0]}")/../versions.sh"

# Address ranges of our own cluster: nothing else on the machine uses them (up.sh checks the
# routing table before starting). Every pod IP and ClusterIP is one of our own namespaces.
POD_CIDR=10.244.0.0/16
NODE_POD_CIDR=10.244.0.0/24
POD_GATEWAY=10.244.0.1        # the CNI bridge's address: pods reach the host here too
SERVICE_CIDR=10.96.0.0/16
SERVICE_FIRST_IP=10.96.0.1    # the `kubernetes` Service
DNS_SERVICE_IP=10.96.0.10     # CoreDNS (kube-system/kube-dns)
CLUSTER_DOMAIN=cluster.local
CNI_BRIDGE=obs-cni0
NODE_NAME=observatory-node
API_PORT=6443
# etcd's client, peer and metrics ports on 127.0.0.1. Every fixed port of the cluster stays out of
# 20000-29999, where the tests' services get theirs at random (packages/devstack/src/ports.ts).
ETCD_CLIENT_PORT=12379
ETCD_PEER_PORT=12380
ETCD_METRICS_PORT=12381

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OBSERVATORY_CACHE=${OBSERVATORY_CACHE:-$REPO_ROOT/.cache}
K8S_BIN=${K8S_BIN:-$OBSERVATORY_CACHE/kubernetes/$K8S_VERSION/bin}   # built once: build-binaries.sh
CLUSTER_DIR=${CLUSTER_DIR:-$REPO_ROOT/.dev/cluster}      # certificates, etcd data, logs, sockets
CLUSTER_MIN_FREE_GIB=${CLUSTER_MIN_FREE_GIB:-8}    # up.sh refuses to start with less free on its filesystem
KUBECONFIG_OUT=${KUBECONFIG_OUT:-$REPO_ROOT/.dev/kubeconfig}

# The machine's own address (eth0 here): the global address of the default route's interface,
# read at run time, never written down.
host_ip() {
  local dev
  dev=$(ip -4 route show default | awk '{for (i = 1; i < NF; i++) if ($i == "dev") { print $(i + 1); exit }}')
  [ -n "$dev" ] && ip -4 -o addr show dev "$dev" scope global | awk '{split($4, a, "/"); print a[1]; exit}'
}

# Images the cluster itself runs, built here by system-images.sh (nothing can be pulled).
PAUSE_IMAGE=localhost/observatory/pause:local
COREDNS_IMAGE=localhost/observatory/coredns:$COREDNS_VERSION
