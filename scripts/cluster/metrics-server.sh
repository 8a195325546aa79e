#!/usr/bin/env bash
# metrics-server (the Resource Metrics API, metrics.k8s.io, that HorizontalPodAutoscalers read) on
# the cluster of `make cluster`:
#   build   builds it from the Go module proxy (../go-tool.sh) and packs its one-layer image into
#           $OBSERVATORY_CACHE/metrics-server/<version>, once; prints the archive's path
#   deploy  build, import the image into the cluster's containerd, make its serving certificate
#           (a Secret; the APIService's caBundle), apply manifests/metrics-server.yaml (namespace
#           $METRICS_NAMESPACE, RBAC, Service, Deployment, APIService v1beta1.metrics.k8s.io) and
#           wait until the API answers with the node's metrics. Idempotent.
#   delete  removes the APIService, the namespace and the cluster-scoped objects.
# The API server must run the aggregation layer (--requestheader-*, --proxy-client-*: up.sh);
# without it metrics-server would see every forwarded request as anonymous and refuse it.
# KUBECONFIG names the cluster.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"

METRICS_SERVER_VERSION=v0.8.0
METRICS_NAMESPACE=${METRICS_NAMESPACE:-observatory-metrics}
METRICS_RESOLUTION=${METRICS_RESOLUTION:-10s}   # how often it scrapes the kubelets (10 s is its floor)
METRICS_SERVER_IMAGE=localhost/observatory/metrics-server:$METRICS_SERVER_VERSION
out=$OBSERVATORY_CACHE/metrics-server/$METRICS_SERVER_VERSION/metrics-server.tar

kubectl() { "$K8S_BIN/kubectl" --kubeconfig "${KUBECONFIG:-$KUBECONFIG_OUT}" "$@"; }

build() {
  if [[ ! -f $out ]]; then
    local bin root
    bin=$(OBSERVATORY_CACHE=$OBSERVATORY_CACHE "$here/../go-tool.sh" \
      --ldflags "-X k8s.io/client-go/pkg/version.gitVersion=$METRICS_SERVER_VERSION" \
      "sigs.k8s.io/metrics-server@$METRICS_SERVER_VERSION" ./cmd/metrics-server)
    root=$(mktemp -d)
    # shellcheck disable=SC2064 # expand now: $root is local
    trap "rm -rf '$root'" RETURN
    chmod 755 "$root"
    cp "$bin/metrics-server" "$root/"
    "$here/oci-image.sh" "$METRICS_SERVER_IMAGE" "$root" '["/metrics-server"]' "$out"
  fi
  echo "$out"
}

deploy() {
  build >/dev/null
  local ca
  ca=$(kubectl -n kube-system get configmap extension-apiserver-authentication \
    -o jsonpath='{.data.requestheader-client-ca-file}')
  if [[ -z $ca ]]; then
    echo "metrics-server.sh: the API server has no aggregation layer (no --requestheader-client-ca-file); restart \`make cluster\` (up.sh sets it)" >&2
    exit 1
  fi
  ctr --address "$CLUSTER_DIR/run/containerd.sock" -n k8s.io images import "$out" >/dev/null
  kubectl create namespace "$METRICS_NAMESPACE" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  # Its serving certificate: self-signed for the Service's name, which the APIService trusts.
  local svc=metrics-server.$METRICS_NAMESPACE.svc bundle
  if ! bundle=$(kubectl -n "$METRICS_NAMESPACE" get secret metrics-server-tls -o jsonpath='{.data.tls\.crt}' 2>/dev/null) || [[ -z $bundle ]]; then
    local tls
    tls=$(mktemp -d)
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=$svc" -addext "subjectAltName=DNS:$svc" \
      -keyout "$tls/tls.key" -out "$tls/tls.crt" 2>/dev/null
    kubectl -n "$METRICS_NAMESPACE" create secret tls metrics-server-tls --cert "$tls/tls.crt" --key "$tls/tls.key" >/dev/null
    bundle=$(base64 -w0 "$tls/tls.crt")
    rm -rf "$tls"
  fi
  sed -e "s|@NAMESPACE@|$METRICS_NAMESPACE|g" -e "s|@IMAGE@|$METRICS_SERVER_IMAGE|g" \
    -e "s|@RESOLUTION@|$METRICS_RESOLUTION|g" -e "s|@CA_BUNDLE@|$bundle|g" \
    "$here/manifests/metrics-server.yaml" | kubectl apply -f - >/dev/null
  kubectl -n "$METRICS_NAMESPACE" rollout status deployment/metrics-server --timeout 120s >/dev/null
  kubectl wait --for condition=Available apiservice/v1beta1.metrics.k8s.io --timeout 60s >/dev/null
  # The first scrape comes one resolution after the start.
  local i
  for i in $(seq 60); do
    kubectl get --raw "/apis/metrics.k8s.io/v1beta1/nodes/$NODE_NAME" >/dev/null 2>&1 && return 0
    sleep 1
  done
  echo "metrics-server.sh: no metrics of node $NODE_NAME after 60 s (logs: kubectl -n $METRICS_NAMESPACE logs deploy/metrics-server)" >&2
  exit 1
}

delete() {
  kubectl delete apiservice v1beta1.metrics.k8s.io --ignore-not-found >/dev/null
  kubectl delete namespace "$METRICS_NAMESPACE" --ignore-not-found --wait=true >/dev/null
  kubectl delete clusterrolebinding observatory:metrics-server observatory:metrics-server:auth-delegator \
    --ignore-not-found >/dev/null
  kubectl delete clusterrole observatory:metrics-server observatory:metrics-reader --ignore-not-found >/dev/null
  kubectl -n kube-system delete rolebinding observatory:metrics-server:auth-reader --ignore-not-found >/dev/null
}

case ${1:-deploy} in
  build) build ;;
  deploy) deploy ;;
  delete) delete ;;
  *) echo "metrics-server.sh: unknown command '$1' (build, deploy or delete)" >&2; exit 2 ;;
esac
