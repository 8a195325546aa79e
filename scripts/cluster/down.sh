#!/usr/bin/env bash
# Stops the cluster that up.sh started and removes everything it created outside its folder:
# workloads first (so kubelet tears their containers and network down through the CRI), then
# kubelet, kube-proxy (and its rules), containerd, the control plane, etcd; then mounts, the CNI
# bridge, kubelet's iptables chains, our egress rule, and the sysctls it changed.
# Only processes whose pid up.sh recorded are signalled. `down.sh quiet`: no messages.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"
run=$CLUSTER_DIR/run
quiet=${1:-}
say() { [[ $quiet == quiet ]] || echo "$@"; }

# stop <name>: SIGTERM the recorded pid (if it is still the program we started), SIGKILL after 20 s.
stop() {
  local f=$run/$1.pid pid i
  [[ -f $f ]] || return 0
  pid=$(cat "$f")
  if [[ -e /proc/$pid ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$1"; then
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 40; i++)); do [[ -e /proc/$pid ]] || break; sleep 0.5; done
    [[ -e /proc/$pid ]] && kill -KILL "$pid" 2>/dev/null && sleep 0.5
  fi
  rm -f "$f"
}
alive() { [[ -f $run/$1.pid ]] && kill -0 "$(cat "$run/$1.pid")" 2>/dev/null; }
kubectl() { "$K8S_BIN/kubectl" --kubeconfig "$CLUSTER_DIR/pki/admin.kubeconfig" --request-timeout 10s "$@"; }

rm -f "$CLUSTER_DIR/ready" "$KUBECONFIG_OUT"
# 1. No controller recreates pods any more; then every pod is deleted while kubelet still runs.
stop kube-controller-manager
stop kube-scheduler
if alive kube-apiserver && alive kubelet; then
  say "deleting every pod..."
  kubectl delete pods --all --all-namespaces --grace-period 5 --wait=false >/dev/null 2>&1
  # Job pods carry a finalizer that only the (stopped) Job controller removes: drop it here.
  kubectl get pods -A -o jsonpath='{range .items[?(@.metadata.finalizers)]}{.metadata.namespace} {.metadata.name}{"\n"}{end}' 2>/dev/null |
    while read -r ns pod; do
      kubectl -n "$ns" patch pod "$pod" --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
    done
  for ((i = 0; i < 90; i++)); do
    [[ -z $(kubectl get pods -A -o name 2>/dev/null) ]] && break
    sleep 1
  done
fi
stop kubelet
stop kube-proxy
"$K8S_BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
stop kube-router
# Its chains (KUBE-ROUTER-*, KUBE-NWPLCY-*, KUBE-POD-FW-*) and ipsets.
kr=$OBSERVATORY_CACHE/kube-router/$KUBE_ROUTER_VERSION/bin/kube-router
[[ -x $kr ]] && "$kr" --cleanup-config >/dev/null 2>&1

# 2. Whatever kubelet did not stop (a crash): kill the tasks so no shim outlives containerd.
if alive containerd; then
  sock=$run/containerd.sock
  for id in $(ctr --address "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
    ctr --address "$sock" -n k8s.io tasks kill -s SIGKILL "$id" >/dev/null 2>&1
    sleep 0.2
    ctr --address "$sock" -n k8s.io tasks delete -f "$id" >/dev/null 2>&1
  done
fi
stop containerd
stop kube-apiserver
stop etcd
# 3. Mounts left under our folder (pod volumes, shm, overlay rootfs of a killed container).
findmnt -rn -o TARGET | grep -F "$CLUSTER_DIR/" | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
# 4. Network: pod interfaces, the bridge, and the chains kubelet and the CNI plugins added.
for pod_if in $(ip -o link show master "$CNI_BRIDGE" 2>/dev/null | awk -F'[ :@]+' '{print $2}'); do
  ip link del "$pod_if" 2>/dev/null
done
ip link del "$CNI_BRIDGE" 2>/dev/null
while iptables -D FORWARD -s "$POD_CIDR" ! -d "$POD_CIDR" -m comment --comment observatory-pod-egress -j DROP 2>/dev/null; do :; done
for table in filter nat mangle; do
  chains=$(iptables -t "$table" -S | awk '$1 == "-N" && ($2 ~ /^KUBE-/ || $2 ~ /^CNI-/) {print $2}')
  [[ -z $chains ]] && continue
  # Jumps into those chains from the built-in chains first, then the chains themselves.
  iptables -t "$table" -S | grep -E '^-A [A-Z]+ .*-j (KUBE-|CNI-)' | grep -vE '^-A (KUBE-|CNI-)' |
    while read -r line; do eval "iptables -t $table ${line/-A/-D}" 2>/dev/null; done
  for c in $chains; do iptables -t "$table" -F "$c" 2>/dev/null; done
  for c in $chains; do iptables -t "$table" -X "$c" 2>/dev/null; done
done
# 5. Sysctls back to what they were before up.sh.
if [[ -f $CLUSTER_DIR/sysctl.saved ]]; then
  while IFS= read -r kv; do sysctl -q -w "$kv" >/dev/null 2>&1; done <"$CLUSTER_DIR/sysctl.saved"
  rm -f "$CLUSTER_DIR/sysctl.saved"
fi
rm -rf "$run" "$CLUSTER_DIR/cni/ipam"
say "cluster stopped"
exit 0
