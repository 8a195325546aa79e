#!/usr/bin/env bash
# metrics-server (the Resource Metrics API, metrics.k8s.io, that HorizontalPodAutoscalers read) on
# the cluster of `make cluster`, for the autoscaling suite (the add-on recipe: addon.sh):
#   build   builds it from the Go module proxy and packs its one-layer image into
#           $OBSERVATORY_CACHE/metrics-server/<version>, once; prints the archive's path. On its own
#           k8s.io versions (v0.33 for v0.8.0): built against the cluster's (go-tool.sh --k8s) it
#           compiles but exits at start (its generated OpenAPI definitions do not match the newer
#           types' model names; README.md), and its unavailable APIService then holds up every
#           namespace deletion (the namespace controller cannot list metrics.k8s.io)
#   deploy  build, import the image, make its serving certificate (a Secret; the APIService's
#           caBundle), apply manifests/metrics-server.yaml (namespace $METRICS_NAMESPACE, RBAC,
#           Service, Deployment, APIService v1beta1.metrics.k8s.io) and wait until the API answers
#           with the node's metrics. Idempotent. Needs the aggregation layer (up.sh).
#   delete  removes the APIService, the namespace and the cluster-scoped objects.
# KUBECONFIG names the cluster.
# shellcheck source=addon.sh
source "$(dirname "$0")/addon.sh"

METRICS_NAMESPACE=${METRICS_NAMESPACE:-observatory-metrics}
METRICS_RESOLUTION=${METRICS_RESOLUTION:-10s}   # how often it scrapes the kubelets (10 s is its floor)
METRICS_SERVER_IMAGE=localhost/observatory/metrics-server:$METRICS_SERVER_VERSION
out=$OBSERVATORY_CACHE/metrics-server/$METRICS_SERVER_VERSION/metrics-server.tar

build() {
  if [[ ! -f $out ]]; then
    local bin
    bin=$(go_tool --ldflags "-X k8s.io/client-go/pkg/version.gitVersion=$METRICS_SERVER_VERSION" \
      "sigs.k8s.io/metrics-server@$METRICS_SERVER_VERSION" ./cmd/metrics-server)
    addon_image "$METRICS_SERVER_IMAGE" "$out" '["/metrics-server"]' "$bin/metrics-server=/metrics-server"
  fi
  echo "$out"
}

deploy() {
  build >/dev/null
  addon_needs_aggregation
  addon_import "$out"
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
    "$addon_here/manifests/metrics-server.yaml" | kubectl apply -f - >/dev/null
  addon_rollout "$METRICS_NAMESPACE" 120s deployment/metrics-server
  kubectl wait --for condition=Available apiservice/v1beta1.metrics.k8s.io --timeout 60s >/dev/null
  # The first scrape comes one resolution after the start.
  addon_until 60 kubectl get --raw "/apis/metrics.k8s.io/v1beta1/nodes/$NODE_NAME" && return 0
  echo "metrics-server.sh: no metrics of node $NODE_NAME after 60 s (logs: kubectl -n $METRICS_NAMESPACE logs deploy/metrics-server)" >&2
  return 1
}

delete() {
  kubectl delete apiservice v1beta1.metrics.k8s.io --ignore-not-found >/dev/null
  addon_delete "$METRICS_NAMESPACE" clusterrolebinding/observatory:metrics-server \
    clusterrolebinding/observatory:metrics-server:auth-delegator clusterrole/observatory:metrics-server \
    clusterrole/observatory:metrics-reader
  kubectl -n kube-system delete rolebinding observatory:metrics-server:auth-reader --ignore-not-found >/dev/null
}

addon_main "$@"
