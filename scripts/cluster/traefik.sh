#!/usr/bin/env bash
# Installs Traefik v3 (scripts/install-traefik.sh builds it, cached) into the cluster of `make
# cluster`: the image imported into its containerd, the Gateway API CRDs (cdk8s/vendor), then
# manifests/traefik.yaml; waits until it is Ready. `traefik.sh delete` removes it again (the CRDs
# stay, as other CRDs do). Used by e2e/cluster/ingress.test.ts. KUBECONFIG names the cluster.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"
kubectl() { "$K8S_BIN/kubectl" --kubeconfig "${KUBECONFIG:-$KUBECONFIG_OUT}" "$@"; }

if [[ ${1:-} == delete ]]; then
  kubectl delete namespace observatory-traefik --ignore-not-found --wait=true >/dev/null
  kubectl delete clusterrolebinding,clusterrole observatory:traefik --ignore-not-found >/dev/null
  kubectl delete ingressclass,gatewayclass observatory-traefik --ignore-not-found >/dev/null
  exit 0
fi

tar=$("$here/../install-traefik.sh")
image=$(tar -xOf "$tar" ./index.json | sed -n 's/.*"io.containerd.image.name":"\([^"]*\)".*/\1/p')
ctr --address "$CLUSTER_DIR/run/containerd.sock" -n k8s.io images import "$tar" >/dev/null
kubectl apply --server-side -f "$REPO_ROOT/cdk8s/vendor/gateway-api-crds/" >/dev/null
kubectl wait --for condition=Established crd/gateways.gateway.networking.k8s.io crd/httproutes.gateway.networking.k8s.io >/dev/null
sed "s#__TRAEFIK_IMAGE__#$image#" "$here/manifests/traefik.yaml" | kubectl apply -f - >/dev/null
kubectl -n observatory-traefik rollout status deployment/traefik --timeout 120s >/dev/null
echo "$image"
