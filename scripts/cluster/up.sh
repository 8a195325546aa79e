#!/usr/bin/env bash
# `make cluster`: a single-node Kubernetes of real components in the foreground. Ctrl-C (or
# SIGTERM) stops all of it and removes what it created (down.sh). Each start is a fresh cluster
# (new etcd data and certificates); containerd's image store in $CLUSTER_DIR/containerd is kept.
# Writes $KUBECONFIG_OUT (.dev/kubeconfig) and, once the node is Ready, DNS answers and the default
# StorageClass `local-path` provisions (local-path-provisioner.sh), $CLUSTER_DIR/ready.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"
[[ $(id -u) == 0 ]] || { echo "make cluster needs root (containerd, kubelet, iptables)" >&2; exit 1; }

"$here/install-deps.sh"
"$here/build-binaries.sh"
read -r pause_tar coredns_tar < <("$here/system-images.sh")
kube_router=$("$here/build-kube-router.sh")
"$here/local-path-provisioner.sh" build >/dev/null

# One cluster at a time: refuse while another up.sh runs (it owns the ports and the bridge).
mkdir -p "$CLUSTER_DIR"
if [[ -f $CLUSTER_DIR/up.pid ]]; then
  other=$(cat "$CLUSTER_DIR/up.pid")
  if [[ $other != "$$" && -e /proc/$other ]] && grep -q up.sh "/proc/$other/cmdline" 2>/dev/null; then
    echo "a cluster is already running (up.sh, pid $other); use it (KUBECONFIG=$KUBECONFIG_OUT) or stop it" >&2
    exit 1
  fi
fi
echo $$ >"$CLUSTER_DIR/up.pid"
# A run that was killed without cleaning up leaves processes and network state: remove them.
"$here/down.sh" quiet

HOST_IP=$(host_ip)
[[ -n $HOST_IP ]] || { echo "cannot find this machine's own address" >&2; exit 1; }
# Our ranges must be free: a route into them that is not our bridge means someone else uses them.
ip2int() { local IFS=.; read -r a b c d <<<"$1"; echo $(((a << 24) + (b << 16) + (c << 8) + d)); }
overlaps() { # overlaps <cidr> <cidr>
  local n1=$(ip2int "${1%/*}") n2=$(ip2int "${2%/*}") l=$((${1#*/} < ${2#*/} ? ${1#*/} : ${2#*/}))
  local mask=$(((0xffffffff << (32 - l)) & 0xffffffff))
  (((n1 & mask) == (n2 & mask)))
}
while read -r dst rest; do
  [[ $dst == default || $rest == *"dev $CNI_BRIDGE"* ]] && continue
  [[ $dst == */* ]] || dst=$dst/32
  for ours in "$POD_CIDR" "$SERVICE_CIDR"; do
    if overlaps "$dst" "$ours"; then
      echo "the route '$dst $rest' overlaps $ours: pick other ranges in scripts/cluster/config.sh" >&2; exit 1
    fi
  done
done < <(ip -4 route)

# The images, the containers' layers and the volumes of a run of the cluster suites take about
# 6 GiB under $CLUSTER_DIR. Short of that, the disk fills during the run, the kubelet evicts pods and
# the suites fail on pods that never start: say so before starting instead.
free_gib=$(df -BG --output=avail "$CLUSTER_DIR" | tail -1 | tr -dc 0-9)
if ((free_gib < CLUSTER_MIN_FREE_GIB)); then
  echo "only ${free_gib} GiB free on the filesystem of $CLUSTER_DIR; the cluster needs ${CLUSTER_MIN_FREE_GIB} GiB" \
    "(CLUSTER_MIN_FREE_GIB): free some space" >&2
  exit 1
fi

run=$CLUSTER_DIR/run logs=$CLUSTER_DIR/logs pki=$CLUSTER_DIR/pki
rm -rf "$CLUSTER_DIR/etcd" "$pki" "$run" "$logs" "$CLUSTER_DIR/kubelet" "$CLUSTER_DIR/cni" "$CLUSTER_DIR/ready" \
  "$CLUSTER_DIR/local-path"
mkdir -p "$run" "$logs" "$pki" "$CLUSTER_DIR/containerd" "$CLUSTER_DIR/kubelet" "$CLUSTER_DIR/cni/net.d"
"$here/gen-certs.sh" "$pki" "$HOST_IP"
sock=$run/containerd.sock

# Sysctls that kubelet, kube-proxy and the bridge plugin change; down.sh puts them back.
for s in vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward \
  net.bridge.bridge-nf-call-iptables net.ipv4.conf.all.route_localnet; do
  v=$(sysctl -n "$s" 2>/dev/null) && echo "$s=$v"
done >"$CLUSTER_DIR/sysctl.saved"

stopping=0
on_signal() {
  [[ $stopping == 1 ]] && return
  stopping=1
  echo "stopping the cluster..."
  "$here/down.sh"
  rm -f "$CLUSTER_DIR/up.pid"
  exit 0
}
trap on_signal INT TERM HUP
trap '[[ $stopping == 1 ]] || "$here/down.sh"; rm -f "$CLUSTER_DIR/up.pid"' EXIT

# start <name> <command...>: a daemon in its own session, so that the terminal's Ctrl-C reaches
# only this script, which then stops everything in order (workloads before kubelet, and so on).
start() {
  local name=$1
  shift
  setsid "$@" >"$logs/$name.log" 2>&1 </dev/null &
  echo $! >"$run/$name.pid"
}
# A test run that started us names itself in OBSERVATORY_CLUSTER_PARENT: when that process is
# gone (killed without stopping us), we stop too, so no cluster outlives its test run.
parent_gone() { [[ -n ${OBSERVATORY_CLUSTER_PARENT:-} ]] && ! kill -0 "$OBSERVATORY_CLUSTER_PARENT" 2>/dev/null; }
# wait_for <what> <seconds> <command...>
wait_for() {
  local what=$1 limit=$2 t0=$SECONDS
  shift 2
  until "$@" >/dev/null 2>&1; do
    if parent_gone; then echo "the process that started the cluster is gone" >&2; exit 1; fi
    if ((SECONDS - t0 > limit)); then echo "timed out after ${limit}s waiting for $what (logs: $logs)" >&2; exit 1; fi
    sleep 0.5
  done
}
kubectl() { "$K8S_BIN/kubectl" --kubeconfig "$pki/admin.kubeconfig" "$@"; }
t0=$SECONDS

# --- containerd (Debian's), with a root, state and socket of its own
cat >"$CLUSTER_DIR/containerd.toml" <<TOML
version = 2
root = "$CLUSTER_DIR/containerd"
state = "$run/containerd-state"
[grpc]
  address = "$sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true   # nothing may lower oom_score_adj here (no CAP_SYS_RESOURCE)
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$CLUSTER_DIR/cni/net.d"
TOML
# ipMasq off: pods only ever talk to each other, Services and this machine's own address.
cat >"$CLUSTER_DIR/cni/net.d/10-observatory.conflist" <<JSON
{
  "cniVersion": "0.4.0",
  "name": "observatory",
  "plugins": [
    {
      "type": "bridge", "bridge": "$CNI_BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {
        "type": "host-local", "dataDir": "$CLUSTER_DIR/cni/ipam",
        "ranges": [[{ "subnet": "$NODE_POD_CIDR", "gateway": "$POD_GATEWAY" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
JSON
start containerd containerd --config "$CLUSTER_DIR/containerd.toml"
wait_for containerd 30 ctr --address "$sock" version
for tar in "$pause_tar" "$coredns_tar"; do
  ctr --address "$sock" -n k8s.io images import "$tar" >/dev/null
done

# Pods may reach this machine and each other, nothing beyond: forwarded traffic from the pod
# range to any address outside it is dropped (Services are rewritten to pod IPs before this).
iptables -I FORWARD -s "$POD_CIDR" ! -d "$POD_CIDR" -m comment --comment observatory-pod-egress -j DROP

# --- etcd and the control plane
start etcd "$K8S_BIN/etcd" --name observatory --data-dir "$CLUSTER_DIR/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "observatory=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "http://127.0.0.1:$ETCD_METRICS_PORT" \
  --unsafe-no-fsync=true --log-level warn
start kube-apiserver "$K8S_BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_CLIENT_PORT" \
  --bind-address 0.0.0.0 --secure-port "$API_PORT" --advertise-address "$HOST_IP" \
  --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
  --client-ca-file "$pki/ca.crt" --service-cluster-ip-range "$SERVICE_CIDR" \
  --service-account-issuer "https://kubernetes.default.svc.$CLUSTER_DOMAIN" \
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
  --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction --allow-privileged=true \
  --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
  --kubelet-client-key "$pki/apiserver-kubelet-client.key" --kubelet-certificate-authority "$pki/ca.crt" \
  --kubelet-preferred-address-types InternalIP \
  --requestheader-client-ca-file "$pki/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
  --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
  --requestheader-extra-headers-prefix X-Remote-Extra- \
  --proxy-client-cert-file "$pki/front-proxy-client.crt" --proxy-client-key-file "$pki/front-proxy-client.key" \
  --profiling=false
wait_for "the API server" 90 kubectl get --raw /readyz
start kube-controller-manager "$K8S_BIN/kube-controller-manager" \
  --kubeconfig "$pki/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$pki/controller-manager.kubeconfig" \
  --authorization-kubeconfig "$pki/controller-manager.kubeconfig" \
  --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials \
  --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
  --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
  --allocate-node-cidrs --cluster-cidr "$POD_CIDR" --node-cidr-mask-size 24 \
  --service-cluster-ip-range "$SERVICE_CIDR" --profiling=false
start kube-scheduler "$K8S_BIN/kube-scheduler" --kubeconfig "$pki/scheduler.kubeconfig" \
  --authentication-kubeconfig "$pki/scheduler.kubeconfig" --authorization-kubeconfig "$pki/scheduler.kubeconfig" \
  --bind-address 127.0.0.1 --leader-elect=false --profiling=false
sed -e "s/__DNS_SERVICE_IP__/$DNS_SERVICE_IP/" -e "s/__CLUSTER_DOMAIN__/$CLUSTER_DOMAIN/" \
  -e "s#__COREDNS_IMAGE__#$COREDNS_IMAGE#" "$here/manifests/bootstrap.yaml" >"$run/bootstrap.yaml"
wait_for "the kube-system namespace" 30 kubectl get namespace kube-system
kubectl apply -f "$run/bootstrap.yaml" >/dev/null

# --- the node: kubelet and kube-proxy
# Pods whose dnsPolicy is Default get this file: no upstream name server beyond the cluster.
echo "nameserver $DNS_SERVICE_IP" >"$CLUSTER_DIR/resolv.conf"
cat >"$CLUSTER_DIR/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs          # PID 1 is not systemd
failCgroupV1: false             # cgroups are v1 here and cannot be switched
failSwapOn: false
containerRuntimeEndpoint: unix://$sock
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: $pki/ca.crt }
authorization: { mode: Webhook }
tlsCertFile: $pki/kubelet-serving.crt
tlsPrivateKeyFile: $pki/kubelet-serving.key
clusterDNS: [$DNS_SERVICE_IP]
clusterDomain: $CLUSTER_DOMAIN
resolvConf: $CLUSTER_DIR/resolv.conf
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
# A test machine's disk is shared: evict pods and delete our images for disk pressure only at the
# last GiB (a share of a large disk, as the kubelet's defaults are, would be many GiB still free).
evictionHard: { memory.available: 100Mi, nodefs.available: 1Gi, imagefs.available: 1Gi }
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
YAML
start kubelet "$K8S_BIN/kubelet" --config "$CLUSTER_DIR/kubelet.yaml" \
  --kubeconfig "$pki/kubelet.kubeconfig" --root-dir "$CLUSTER_DIR/kubelet" \
  --node-ip "$HOST_IP" --hostname-override "$NODE_NAME"
start kube-proxy "$K8S_BIN/kube-proxy" --kubeconfig "$pki/kube-proxy.kubeconfig" \
  --proxy-mode iptables --cluster-cidr "$POD_CIDR" --hostname-override "$NODE_NAME" \
  --conntrack-max-per-core 0 --metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256

wait_for "node $NODE_NAME" 60 kubectl get node "$NODE_NAME"
# The NetworkPolicy enforcer: kube-router's firewall alone (iptables + ipset), beside kube-proxy.
# It exits unless its Node exists, so it starts once kubelet has registered it.
start kube-router "$kube_router" --run-firewall=true --run-router=false --run-service-proxy=false \
  --kubeconfig "$pki/kube-router.kubeconfig" --hostname-override "$NODE_NAME" \
  --health-port 0 --metrics-port 0
kubectl wait --for condition=Ready "node/$NODE_NAME" --timeout 120s >/dev/null
kubectl -n kube-system rollout status deployment/coredns --timeout 120s >/dev/null
# The default StorageClass, so claims without a class bind (as on kind).
KUBECONFIG=$pki/admin.kubeconfig "$here/local-path-provisioner.sh" deploy

mkdir -p "$(dirname "$KUBECONFIG_OUT")"
install -m 600 "$pki/admin.kubeconfig" "$KUBECONFIG_OUT"
touch "$CLUSTER_DIR/ready"
echo "cluster ready in $((SECONDS - t0)) s: Kubernetes $K8S_VERSION, NetworkPolicy by kube-router $KUBE_ROUTER_VERSION, node $NODE_NAME ($HOST_IP), pods $POD_CIDR, services $SERVICE_CIDR"
echo "export KUBECONFIG=$KUBECONFIG_OUT   (kubectl: $K8S_BIN/kubectl; logs: $logs; Ctrl-C stops it)"

# Run until Ctrl-C/SIGTERM, or until one of the components dies (then stop the rest, fail).
while true; do
  if parent_gone; then echo "the process that started the cluster is gone: stopping" >&2; exit 1; fi
  for f in "$run"/*.pid; do
    if ! kill -0 "$(cat "$f")" 2>/dev/null; then
      name=$(basename "$f" .pid)
      echo "$name exited; last lines of $logs/$name.log:" >&2
      tail -n 20 "$logs/$name.log" >&2
      exit 1
    fi
  done
  sleep 2 &
  wait $! || true
done
