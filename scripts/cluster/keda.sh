#!/usr/bin/env bash
# KEDA (Kubernetes Event-driven Autoscaling) on the test cluster, for the chart's
# consumer.autoscaling.keda option (a ScaledObject with the Kafka scaler on the consumer group's
# lag); the add-on recipe: addon.sh.
#   build   the operator and its metrics adapter from the Go module proxy, their images and the
#           CRDs, once, cached under $OBSERVATORY_CACHE/keda/<version>; the install manifests
#           rendered from the module's own config/ folder through manifests/keda-kustomization.yaml
#           (again whenever that overlay changes: no rebuild)
#   deploy  build, import the images, apply the CRDs, RBAC, the operator and the adapter (namespace
#           keda), wait until both are ready, then register the APIService
#           v1beta1.external.metrics.k8s.io (manifests/keda-apiservice.yaml) with the CA of the
#           certificates the operator made, and wait until the API answers. Idempotent.
#   crds    only the release's CRDs (from the module's source, no build), once; prints their folder
#   delete  the APIService first, then the namespace and KEDA's cluster-scoped objects except the
#           CRDs; refuses while a ScaledObject exists (its finalizer needs the operator).
# The adapter is an aggregated API: without the API server's aggregation layer the HPA that KEDA
# makes cannot read the lag and only KEDA's own 0<->1 activation works. An APIService whose server
# does not answer fails discovery of its group, and the namespace controller then cannot finish
# deleting any namespace: so it is registered only once the adapter is ready, and removed first.
# shellcheck source=addon.sh
source "$(dirname "$0")/addon.sh"

KEDA_NAMESPACE=keda    # the operator's config/ folder names this namespace in its objects
OPERATOR_IMAGE=localhost/observatory/keda:$KEDA_VERSION
ADAPTER_IMAGE=localhost/observatory/keda-metrics-apiserver:$KEDA_VERSION
module=github.com/kedacore/keda/v2@$KEDA_VERSION
base=$OBSERVATORY_CACHE/keda/$KEDA_VERSION

build() {
  if [[ ! -f $base/images/operator.tar || ! -f $base/images/adapter.tar ]]; then
    # The paths KEDA's own Dockerfiles use; the pods run as 65532 (the overlay), KEDA's images' user.
    local bin
    bin=$(go_tool --ldflags "-X ${module%@*}/version.Version=${KEDA_VERSION#v}" "$module" ./cmd/operator ./cmd/adapter)
    addon_image "$OPERATOR_IMAGE" "$base/images/operator.tar" '["/keda"]' "$bin/operator=/keda"
    addon_image "$ADAPTER_IMAGE" "$base/images/adapter.tar" '["/keda-adapter"]' "$bin/adapter=/keda-adapter"
  fi
  crds >/dev/null
  manifests
}

# The CRDs apart: applied first and waited for, and never deleted by `delete`. Alone, without a
# build, for e2e/api-lines, which stores the chart's ScaledObject on older API servers: prints
# their folder.
crds() {
  addon_module_crds "$module" config/crd/bases "$base/crds"
  echo "$base/crds"
}

# The install manifests of this very release: its config/ folder (namespace, RBAC, the operator,
# the adapter) through a kustomize overlay that names our images, leaves out the admission
# webhooks (not built; the CRDs' own validation remains) and KEDA's APIService (deploy registers
# its own), and sets the numeric user. Rendered again only when the overlay changed.
manifests() {
  local overlay=$addon_here/manifests/keda-kustomization.yaml sum work
  sum=$(sha256sum "$overlay" | cut -d' ' -f1)
  [[ -f $base/keda.yaml && $(cat "$base/keda.yaml.sha256" 2>/dev/null) == "$sum" ]] && return 0
  work=$(mktemp -d)
  # shellcheck disable=SC2064 # expand now: $work is local
  trap "rm -rf '$work'" RETURN
  cp -r "$(module_dir "$module")/config" "$work/config" && chmod -R u+w "$work/config"
  mkdir -p "$work/overlay"
  sed -e "s|@OPERATOR_IMAGE@|${OPERATOR_IMAGE%:*}|" -e "s|@ADAPTER_IMAGE@|${ADAPTER_IMAGE%:*}|" \
    -e "s|@TAG@|$KEDA_VERSION|g" "$overlay" >"$work/overlay/kustomization.yaml"
  kubectl kustomize "$work/overlay" >"$work/keda.yaml"
  mv "$work/keda.yaml" "$base/keda.yaml"
  echo "$sum" >"$base/keda.yaml.sha256"
}

deploy() {
  addon_needs_aggregation
  build
  addon_import "$base/images/operator.tar" "$base/images/adapter.tar"
  addon_crds "$base/crds"
  kubectl apply --server-side --force-conflicts -f "$base/keda.yaml" >/dev/null
  # The operator makes the certificates (Secret kedaorg-certs: a CA, and a serving certificate for
  # its gRPC metrics service and the adapter) and restarts once to load them; the adapter mounts
  # them and becomes ready once it reaches the operator. A first deploy takes a minute or two.
  addon_rollout "$KEDA_NAMESPACE" 240s deployment/keda-operator deployment/keda-metrics-apiserver
  local ca
  ca=$(kubectl -n "$KEDA_NAMESPACE" get secret kedaorg-certs -o jsonpath='{.data.ca\.crt}')
  sed -e "s|@NAMESPACE@|$KEDA_NAMESPACE|g" -e "s|@CA_BUNDLE@|$ca|" "$addon_here/manifests/keda-apiservice.yaml" |
    kubectl apply --server-side --force-conflicts -f - >/dev/null
  addon_until 60 kubectl get --raw /apis/external.metrics.k8s.io/v1beta1 && return 0
  echo "keda.sh: the external metrics API (v1beta1.external.metrics.k8s.io) does not answer:" >&2
  kubectl get apiservice v1beta1.external.metrics.k8s.io -o jsonpath='{.status.conditions[0].message}' >&2
  echo >&2
  return 1
}

delete() {
  local left
  left=$(kubectl get scaledobjects.keda.sh --all-namespaces -o name 2>/dev/null || true)
  if [[ -n $left ]]; then
    echo "keda.sh: ScaledObjects remain (their finalizer needs the operator; delete them or their releases first): $(echo "$left" | tr '\n' ' ')" >&2
    return 1
  fi
  kubectl delete apiservice v1beta1.external.metrics.k8s.io --ignore-not-found >/dev/null
  [[ -f $base/keda.yaml ]] || return 0
  kubectl delete -f "$base/keda.yaml" --ignore-not-found --wait=true >/dev/null
}

addon_main "$@"
