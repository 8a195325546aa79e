#!/usr/bin/env bash
# A real Prometheus Operator stack on the test cluster, for the monitoring suite (the add-on
# recipe: addon.sh):
#   build   the operator and its config reloader, Prometheus itself (Kubernetes service discovery
#           only) and their images, once, cached beside their binaries
#           ($OBSERVATORY_CACHE/prometheus-operator/<version>-k8s<K8S_VERSION>: built against the
#           cluster's own k8s.io modules, go-tool.sh --k8s; Prometheus likewise, in
#           .../prometheus/<module version>-k8s<K8S_VERSION>)
#   deploy  build, import the images, apply the CRDs, the operator (namespace $PROM_NAMESPACE) and
#           one Prometheus that selects ServiceMonitors and PrometheusRules labelled `release` in
#           any namespace (kube-prometheus-stack's default selector shape); waits until that
#           Prometheus is ready. Idempotent.
#   delete  removes the operator, its Prometheus, namespace and cluster-scoped objects (not the CRDs:
#           other releases' objects of those kinds would go with them).
# Why not Debian's `prometheus` package: bookworm's 2.42 build leaves Kubernetes service discovery
# out (`kubernetes_sd_configs` is an unknown field), and the operator's configs rely on it.
# shellcheck source=addon.sh
source "$(dirname "$0")/addon.sh"

PROM_NAMESPACE=${PROM_NAMESPACE:-observatory-monitoring}
PROM_RELEASE_LABEL=${PROM_RELEASE_LABEL:-observatory-monitor}  # names cluster-scoped objects
OPERATOR_IMAGE=localhost/observatory/prometheus-operator:$PROMETHEUS_OPERATOR_VERSION
PROMETHEUS_IMAGE=localhost/observatory/prometheus:$PROMETHEUS_VERSION
operator_module=github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION

base=$OBSERVATORY_CACHE/prometheus-operator/$PROMETHEUS_OPERATOR_VERSION-k8s$K8S_VERSION
operator_image=$base/operator.tar
prometheus_image=$OBSERVATORY_CACHE/prometheus/$PROMETHEUS_MODULE_VERSION-k8s$K8S_VERSION/prometheus.tar
crds=$base/crds

build() {
  [[ -f $operator_image && -f $prometheus_image && -d $crds ]] && return 0
  local v=github.com/prometheus/common/version operator prom
  # The operator's go.mod replaces its pkg/apis/monitoring and pkg/client modules with local
  # folders; go-tool.sh's wrapper module points them at their own releases.
  operator=$(go_tool --k8s "$K8S_VERSION" --ldflags "-X $v.Version=${PROMETHEUS_OPERATOR_VERSION#v}" \
    "$operator_module" ./cmd/operator ./cmd/prometheus-config-reloader)
  # Prometheus' go.mod has exclude lines, which the wrapper module repeats; the build tags keep
  # only Kubernetes service discovery.
  prom=$(go_tool --k8s "$K8S_VERSION" --tags remove_all_sd,enable_kubernetes_sd --ldflags "-X $v.Version=${PROMETHEUS_VERSION#v}" \
    "github.com/prometheus/prometheus@$PROMETHEUS_MODULE_VERSION" ./cmd/prometheus)
  # The operator's image also carries the reloader at the path the operator runs it from;
  # Prometheus writes to /prometheus.
  addon_image "$OPERATOR_IMAGE" "$operator_image" '["/bin/operator"]' \
    "$operator/operator=/bin/operator" "$operator/prometheus-config-reloader=/bin/prometheus-config-reloader"
  addon_image "$PROMETHEUS_IMAGE" "$prometheus_image" '["/bin/prometheus"]' \
    "$prom/prometheus=/bin/prometheus" =/prometheus =/etc/prometheus
  # The CRDs of this very release ship in its module.
  addon_module_crds "$operator_module" example/prometheus-operator-crd "$crds"
}

deploy() {
  build
  addon_import "$operator_image" "$prometheus_image"
  addon_crds "$crds"
  sed -e "s|@NAMESPACE@|$PROM_NAMESPACE|g" -e "s|@NAME@|$PROM_RELEASE_LABEL|g" \
    -e "s|@OPERATOR_IMAGE@|$OPERATOR_IMAGE|g" -e "s|@PROMETHEUS_IMAGE@|$PROMETHEUS_IMAGE|g" \
    -e "s|@PROMETHEUS_VERSION@|$PROMETHEUS_VERSION|g" \
    "$addon_here/manifests/prometheus-operator.yaml" | kubectl apply -f - >/dev/null
  addon_rollout "$PROM_NAMESPACE" 120s deployment/prometheus-operator
  # The operator creates the StatefulSet a moment after it starts.
  addon_until 60 kubectl -n "$PROM_NAMESPACE" get statefulset prometheus-observatory || true
  addon_rollout "$PROM_NAMESPACE" 180s statefulset/prometheus-observatory
}

delete() {
  addon_delete "$PROM_NAMESPACE" "clusterrole/$PROM_RELEASE_LABEL-operator" "clusterrole/$PROM_RELEASE_LABEL-prometheus" \
    "clusterrolebinding/$PROM_RELEASE_LABEL-operator" "clusterrolebinding/$PROM_RELEASE_LABEL-prometheus"
}

addon_main "$@"
