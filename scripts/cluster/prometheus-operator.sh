#!/usr/bin/env bash
# A real Prometheus Operator stack on the test cluster, for the monitoring suite:
#   build   the operator and its config reloader (Go module proxy, a wrapper module), Prometheus
#           itself (Go module proxy, Kubernetes service discovery only) and their images, once,
#           cached under $OBSERVATORY_CACHE (a stamp makes later calls free)
#   deploy  build, import the images into the cluster's containerd, apply the CRDs, the operator
#           (namespace $PROM_NAMESPACE) and one Prometheus that selects ServiceMonitors and
#           PrometheusRules labelled `release` in any namespace (kube-prometheus-stack's default
#           selector shape); waits until that Prometheus is ready. Idempotent.
#   delete  removes the operator, its Prometheus, namespace and cluster-scoped objects (not the CRDs:
#           other releases' objects of those kinds would go with them).
# Why not Debian's `prometheus` package: bookworm's 2.42 build leaves Kubernetes service discovery
# out (`kubernetes_sd_configs` is an unknown field), and the operator's configs rely on it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"

OPERATOR_VERSION=v0.93.0
PROMETHEUS_VERSION=v3.7.3          # the newest minor in this operator's compatibility matrix
PROMETHEUS_MODULE_VERSION=v0.307.3 # Prometheus' Go module numbers v3.x.y as v0.30x.y
PROM_NAMESPACE=${PROM_NAMESPACE:-observatory-monitoring}
PROM_RELEASE_LABEL=${PROM_RELEASE_LABEL:-observatory-monitor}  # names cluster-scoped objects
OPERATOR_IMAGE=localhost/observatory/prometheus-operator:$OPERATOR_VERSION
PROMETHEUS_IMAGE=localhost/observatory/prometheus:$PROMETHEUS_VERSION

base=$OBSERVATORY_CACHE/prometheus-operator/$OPERATOR_VERSION
bin=$base/bin
images=$base/images
crds=$base/crds

build() {
  local stamp=$base/.complete want="operator=$OPERATOR_VERSION prometheus=$PROMETHEUS_VERSION"
  if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then return 0; fi
  export OBSERVATORY_CACHE
  local m=github.com/prometheus-operator/prometheus-operator v=github.com/prometheus/common/version
  # The operator's go.mod replaces its pkg/apis/monitoring and pkg/client modules with local
  # folders; go-tool.sh's wrapper module points them at their own releases. Into $base/bin.
  "$here/../go-tool.sh" --ldflags "-X $v.Version=${OPERATOR_VERSION#v}" \
    "$m@$OPERATOR_VERSION" ./cmd/operator ./cmd/prometheus-config-reloader >/dev/null
  # Prometheus' go.mod has exclude lines, which the wrapper module repeats; the build tags keep
  # only Kubernetes service discovery.
  local prom
  prom=$("$here/../go-tool.sh" --tags remove_all_sd,enable_kubernetes_sd \
    --ldflags "-X $v.Version=${PROMETHEUS_VERSION#v}" \
    "github.com/prometheus/prometheus@$PROMETHEUS_MODULE_VERSION" ./cmd/prometheus)
  cp "$prom/prometheus" "$bin/"

  local work
  work=$(mktemp -d "$OBSERVATORY_CACHE/prometheus-operator/.build-XXXXXX")
  # shellcheck disable=SC2064 # expand now: $work is local
  trap "rm -rf '$work'" RETURN
  # The CRDs of this very release ship in its module (example/prometheus-operator-crd).
  mkdir -p "$work/crds"
  cp "$(GOFLAGS=-buildvcs=false go mod download -json "$m@$OPERATOR_VERSION" | sed -n 's/^\s*"Dir": "\(.*\)",\?$/\1/p')"/example/prometheus-operator-crd/*.yaml "$work/crds/"

  # One-layer images (oci-image.sh): the operator's image also carries the reloader at the path
  # the operator runs it from (/bin/prometheus-config-reloader); Prometheus writes to /prometheus.
  mkdir -p "$work/images"
  local root
  root=$work/root-operator && mkdir -p "$root/bin" && chmod 755 "$root"
  cp "$bin/operator" "$bin/prometheus-config-reloader" "$root/bin/"
  "$here/oci-image.sh" "$OPERATOR_IMAGE" "$root" '["/bin/operator"]' "$work/images/operator.tar"
  root=$work/root-prometheus && mkdir -p "$root/bin" "$root/prometheus" "$root/etc/prometheus" && chmod 755 "$root"
  chmod 1777 "$root/prometheus"
  cp "$bin/prometheus" "$root/bin/"
  "$here/oci-image.sh" "$PROMETHEUS_IMAGE" "$root" '["/bin/prometheus"]' "$work/images/prometheus.tar"

  rm -rf "$images" "$crds"
  mv "$work/images" "$work/crds" "$base/"
  echo "$want" >"$stamp"
}

kubectl_() { "$K8S_BIN/kubectl" --kubeconfig "${KUBECONFIG:-$KUBECONFIG_OUT}" "$@"; }

deploy() {
  build
  local sock=$CLUSTER_DIR/run/containerd.sock
  for tar in "$images/operator.tar" "$images/prometheus.tar"; do
    ctr --address "$sock" -n k8s.io images import "$tar" >/dev/null
  done
  # Server-side apply: the CRDs are too large for the last-applied annotation.
  kubectl_ apply --server-side --force-conflicts -f "$crds" >/dev/null
  kubectl_ wait --for condition=Established --timeout 60s -f "$crds" >/dev/null
  sed -e "s|@NAMESPACE@|$PROM_NAMESPACE|g" -e "s|@NAME@|$PROM_RELEASE_LABEL|g" \
    -e "s|@OPERATOR_IMAGE@|$OPERATOR_IMAGE|g" -e "s|@PROMETHEUS_IMAGE@|$PROMETHEUS_IMAGE|g" \
    -e "s|@PROMETHEUS_VERSION@|$PROMETHEUS_VERSION|g" \
    "$here/manifests/prometheus-operator.yaml" | kubectl_ apply -f - >/dev/null
  kubectl_ -n "$PROM_NAMESPACE" rollout status deployment/prometheus-operator --timeout 120s >/dev/null
  # The operator creates the StatefulSet a moment after it starts.
  local i
  for i in $(seq 60); do
    kubectl_ -n "$PROM_NAMESPACE" get statefulset prometheus-observatory >/dev/null 2>&1 && break
    sleep 1
  done
  kubectl_ -n "$PROM_NAMESPACE" rollout status statefulset/prometheus-observatory --timeout 180s >/dev/null
}

delete() {
  kubectl_ delete namespace "$PROM_NAMESPACE" --ignore-not-found --wait=true >/dev/null
  kubectl_ delete clusterrole,clusterrolebinding "$PROM_RELEASE_LABEL-operator" "$PROM_RELEASE_LABEL-prometheus" \
    --ignore-not-found >/dev/null
}

case ${1:-deploy} in
  build) build ;;
  deploy) deploy ;;
  delete) delete ;;
  *) echo "prometheus-operator.sh: unknown command '$1' (build, deploy or delete)" >&2; exit 2 ;;
esac
