#!/usr/bin/env bash
# KEDA (Kubernetes Event-driven Autoscaling) on the test cluster, for the chart's
# consumer.autoscaling.keda option (a ScaledObject with the Kafka scaler on the consumer group's lag):
#   build   the operator and its metrics adapter from the Go module proxy, their images, the CRDs
#           and the install manifests (rendered from the module's own config/ folder), once, cached
#           under $OBSERVATORY_CACHE/keda/<version> (a stamp makes later calls free)
#   deploy  build, import the images into the cluster's containerd, apply the CRDs, RBAC, the
#           operator and the adapter (namespace keda; APIService v1beta1.external.metrics.k8s.io);
#           waits until both are ready and the external metrics API answers. Idempotent.
#   delete  removes the namespace and KEDA's cluster-scoped objects except the CRDs (other
#           releases' ScaledObjects would go with them).
# The adapter is an aggregated API: the API server must run the aggregation layer
# (--requestheader-client-ca-file, --proxy-client-cert-file; up.sh), or the HPA that KEDA makes
# cannot read the lag and only KEDA's own 0<->1 activation works.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"

KEDA_VERSION=v2.21.0   # newest the Go module proxy serves; its go.mod asks for Go 1.26.0
KEDA_NAMESPACE=keda    # the operator's config/ folder names this namespace in its objects
OPERATOR_IMAGE=localhost/observatory/keda:$KEDA_VERSION
ADAPTER_IMAGE=localhost/observatory/keda-metrics-apiserver:$KEDA_VERSION
module=github.com/kedacore/keda/v2

base=$OBSERVATORY_CACHE/keda/$KEDA_VERSION
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local CGO_ENABLED=0

build() {
  local stamp=$base/.complete
  if [[ -f $stamp && $(cat "$stamp") == "$KEDA_VERSION" && -f $base/keda.yaml ]]; then return 0; fi
  echo "building KEDA $KEDA_VERSION operator and metrics adapter (cold: many minutes on 2 cores)" >&2
  mkdir -p "$OBSERVATORY_CACHE/keda"
  local work started=$SECONDS
  work=$(mktemp -d "$OBSERVATORY_CACHE/keda/.build-XXXXXX")
  # shellcheck disable=SC2064 # expand now: $work is local
  trap "chmod -R u+w '$work' 2>/dev/null; rm -rf '$work'" RETURN
  local src
  src=$(go mod download -json "$module@$KEDA_VERSION" | sed -n 's/^\s*"Dir": "\(.*\)",\?$/\1/p')
  # Built inside a copy of the module itself: its go.mod/go.sum pin every dependency (and carry
  # its replace and exclude lines), which `go install` would refuse.
  cp -r "$src" "$work/src" && chmod -R u+w "$work/src"
  mkdir -p "$work/bin"
  (
    cd "$work/src"
    go build -trimpath -o "$work/bin/" -ldflags "-s -w -X $module/version.Version=${KEDA_VERSION#v}" \
      ./cmd/operator ./cmd/adapter
  )
  echo "KEDA built in $((SECONDS - started)) s" >&2

  # One-layer images (oci-image.sh) with the paths KEDA's own Dockerfiles use; the pods run as
  # 65532 (the overlay below), KEDA's images' user.
  mkdir -p "$work/images"
  local image binary root
  for image in "operator keda $OPERATOR_IMAGE" "adapter keda-adapter $ADAPTER_IMAGE"; do
    read -r binary root image <<<"$image"
    mkdir -p "$work/root-$binary" && chmod 755 "$work/root-$binary"
    cp "$work/bin/$binary" "$work/root-$binary/$root"
    "$here/oci-image.sh" "$image" "$work/root-$binary" "[\"/$root\"]" "$work/images/$binary.tar"
  done

  # The install manifests of this very release: its config/ folder (namespace, RBAC, the operator,
  # the adapter and its APIService) through a kustomize overlay that names our images, leaves out
  # the admission webhooks (not built; the CRDs' own validation remains) and sets the numeric user.
  cp -r "$src/config" "$work/config" && chmod -R u+w "$work/config"
  mkdir -p "$work/overlay"
  sed -e "s|@OPERATOR_IMAGE@|${OPERATOR_IMAGE%:*}|" -e "s|@ADAPTER_IMAGE@|${ADAPTER_IMAGE%:*}|" \
    -e "s|@TAG@|$KEDA_VERSION|g" "$here/manifests/keda-kustomization.yaml" >"$work/overlay/kustomization.yaml"
  "$K8S_BIN/kubectl" kustomize "$work/overlay" >"$work/keda.yaml"
  # The CRDs apart: applied first and waited for, and never deleted by `delete`.
  mkdir -p "$work/crds"
  cp "$work"/config/crd/bases/*.yaml "$work/crds/"

  echo "$KEDA_VERSION" >"$work/.complete"
  rm -rf "$base" && mkdir -p "$base"
  mv "$work/bin" "$work/images" "$work/crds" "$work/keda.yaml" "$work/.complete" "$base/"
}

kubectl_() { "$K8S_BIN/kubectl" --kubeconfig "${KUBECONFIG:-$KUBECONFIG_OUT}" "$@"; }

deploy() {
  # An APIService whose server cannot be reached leaves its group's discovery failing, and the
  # namespace controller then cannot finish deleting any namespace: refuse before applying it.
  if [[ -z $(kubectl_ -n kube-system get configmap extension-apiserver-authentication \
    -o jsonpath='{.data.requestheader-client-ca-file}') ]]; then
    echo "keda.sh: the API server has no aggregation layer (no --requestheader-client-ca-file); KEDA's metrics API server cannot serve; restart \`make cluster\` with an up.sh that sets it" >&2
    return 1
  fi
  build
  local sock=$CLUSTER_DIR/run/containerd.sock
  for tar in "$base/images/operator.tar" "$base/images/adapter.tar"; do
    ctr --address "$sock" -n k8s.io images import "$tar" >/dev/null
  done
  # Server-side apply: the CRDs are too large for the last-applied annotation.
  kubectl_ apply --server-side --force-conflicts -f "$base/crds" >/dev/null
  kubectl_ wait --for condition=Established --timeout 60s -f "$base/crds" >/dev/null
  kubectl_ apply --server-side --force-conflicts -f "$base/keda.yaml" >/dev/null
  kubectl_ -n "$KEDA_NAMESPACE" rollout status deployment/keda-operator --timeout 180s >/dev/null
  kubectl_ -n "$KEDA_NAMESPACE" rollout status deployment/keda-metrics-apiserver --timeout 180s >/dev/null
  # The operator writes the adapter's certificates and the APIService's caBundle (cert rotation).
  local i
  for i in $(seq 90); do
    kubectl_ get --raw /apis/external.metrics.k8s.io/v1beta1 >/dev/null 2>&1 && return 0
    sleep 2
  done
  echo "keda.sh: the external metrics API (v1beta1.external.metrics.k8s.io) does not answer:" >&2
  kubectl_ get apiservice v1beta1.external.metrics.k8s.io -o jsonpath='{.status.conditions[0].message}' >&2
  echo >&2
  return 1
}

delete() {
  [[ -f $base/keda.yaml ]] || return 0
  kubectl_ delete -f "$base/keda.yaml" --ignore-not-found --wait=true >/dev/null
}

case ${1:-deploy} in
  build) build ;;
  deploy) deploy ;;
  delete) delete ;;
  *) echo "keda.sh: unknown command '$1' (build, deploy or delete)" >&2; exit 2 ;;
esac
