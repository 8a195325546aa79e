#!/usr/bin/env bash
# KEDA (Kubernetes Event-driven Autoscaling) on the test cluster, for the chart's
# consumer.autoscaling.keda option (a ScaledObject with the Kafka scaler on the consumer group's lag):
#   build   the operator and its metrics adapter from the Go module proxy, their images and the
#           CRDs, once, cached under $OBSERVATORY_CACHE/keda/<version> (a stamp makes later calls
#           free); the install manifests rendered from the module's own config/ folder through
#           manifests/keda-kustomization.yaml (again whenever that overlay changes: no rebuild)
#   deploy  build, import the images into the cluster's containerd, apply the CRDs, RBAC, the
#           operator and the adapter (namespace keda), wait until both are ready, then register
#           the APIService v1beta1.external.metrics.k8s.io (manifests/keda-apiservice.yaml) with
#           the CA of the certificates the operator made, and wait until the API answers. Idempotent.
#   delete  the APIService first, then the namespace and KEDA's cluster-scoped objects except the
#           CRDs; refuses while a ScaledObject exists (its finalizer needs the operator).
# The adapter is an aggregated API: the API server must run the aggregation layer
# (--requestheader-client-ca-file, --proxy-client-cert-file; up.sh), or the HPA that KEDA makes
# cannot read the lag and only KEDA's own 0<->1 activation works. An APIService whose server does
# not answer fails discovery of its group, and the namespace controller then cannot finish
# deleting any namespace: so it is registered only once the adapter is ready, and removed first.
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

# The module's source in Go's module cache (downloaded from the proxy once).
module_dir() {
  go mod download -json "$module@$KEDA_VERSION" | sed -n 's/^\s*"Dir": "\(.*\)",\?$/\1/p'
}

build() {
  local stamp=$base/.complete
  if ! [[ -f $stamp && $(cat "$stamp") == "$KEDA_VERSION" && -d $base/images && -d $base/crds ]]; then
    build_binaries
  fi
  manifests
}

build_binaries() {
  echo "building KEDA $KEDA_VERSION operator and metrics adapter (cold: many minutes on 2 cores)" >&2
  mkdir -p "$OBSERVATORY_CACHE/keda"
  local work started=$SECONDS
  work=$(mktemp -d "$OBSERVATORY_CACHE/keda/.build-XXXXXX")
  # shellcheck disable=SC2064 # expand now: $work is local
  trap "chmod -R u+w '$work' 2>/dev/null; rm -rf '$work'" RETURN
  local src
  src=$(module_dir)
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
  # 65532 (the overlay), KEDA's images' user.
  mkdir -p "$work/images"
  local image binary root
  for image in "operator keda $OPERATOR_IMAGE" "adapter keda-adapter $ADAPTER_IMAGE"; do
    read -r binary root image <<<"$image"
    mkdir -p "$work/root-$binary" && chmod 755 "$work/root-$binary"
    cp "$work/bin/$binary" "$work/root-$binary/$root"
    "$here/oci-image.sh" "$image" "$work/root-$binary" "[\"/$root\"]" "$work/images/$binary.tar"
  done
  # The CRDs apart: applied first and waited for, and never deleted by `delete`; config/ for the
  # install manifests (manifests below).
  mkdir -p "$work/crds"
  cp "$work"/src/config/crd/bases/*.yaml "$work/crds/"
  cp -r "$work/src/config" "$work/config"

  echo "$KEDA_VERSION" >"$work/.complete"
  rm -rf "$base" && mkdir -p "$base"
  mv "$work/bin" "$work/images" "$work/crds" "$work/config" "$work/.complete" "$base/"
}

# The install manifests of this very release: its config/ folder (namespace, RBAC, the operator,
# the adapter) through a kustomize overlay that names our images, leaves out the admission
# webhooks (not built; the CRDs' own validation remains) and KEDA's APIService (deploy registers
# its own), and sets the numeric user. Rendered again only when the overlay changed.
manifests() {
  local overlay=$here/manifests/keda-kustomization.yaml sum
  sum=$(sha256sum "$overlay" | cut -d' ' -f1)
  [[ -f $base/keda.yaml && $(cat "$base/keda.yaml.sha256" 2>/dev/null) == "$sum" ]] && return 0
  if [[ ! -d $base/config ]]; then # a cache built before config/ was kept there
    local src
    src=$(module_dir)
    cp -r "$src/config" "$base/config.tmp" && chmod -R u+w "$base/config.tmp" && mv "$base/config.tmp" "$base/config"
  fi
  local work
  work=$(mktemp -d)
  # shellcheck disable=SC2064 # expand now: $work is local
  trap "rm -rf '$work'" RETURN
  cp -r "$base/config" "$work/config"
  mkdir -p "$work/overlay"
  sed -e "s|@OPERATOR_IMAGE@|${OPERATOR_IMAGE%:*}|" -e "s|@ADAPTER_IMAGE@|${ADAPTER_IMAGE%:*}|" \
    -e "s|@TAG@|$KEDA_VERSION|g" "$overlay" >"$work/overlay/kustomization.yaml"
  "$K8S_BIN/kubectl" kustomize "$work/overlay" >"$work/keda.yaml"
  mv "$work/keda.yaml" "$base/keda.yaml"
  echo "$sum" >"$base/keda.yaml.sha256"
}

kubectl_() { "$K8S_BIN/kubectl" --kubeconfig "${KUBECONFIG:-$KUBECONFIG_OUT}" "$@"; }

deploy() {
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
  # The operator makes the certificates (Secret kedaorg-certs: a CA, and a serving certificate for
  # its gRPC metrics service and the adapter) and restarts once to load them; the adapter mounts
  # them and becomes ready once it reaches the operator. A first deploy takes a minute or two.
  if ! kubectl_ -n "$KEDA_NAMESPACE" rollout status deployment/keda-operator --timeout 240s >/dev/null ||
    ! kubectl_ -n "$KEDA_NAMESPACE" rollout status deployment/keda-metrics-apiserver --timeout 240s >/dev/null; then
    echo "keda.sh: KEDA did not become ready:" >&2
    kubectl_ -n "$KEDA_NAMESPACE" get pods -o wide >&2
    return 1
  fi
  local ca
  ca=$(kubectl_ -n "$KEDA_NAMESPACE" get secret kedaorg-certs -o jsonpath='{.data.ca\.crt}')
  sed -e "s|@NAMESPACE@|$KEDA_NAMESPACE|g" -e "s|@CA_BUNDLE@|$ca|" "$here/manifests/keda-apiservice.yaml" |
    kubectl_ apply --server-side --force-conflicts -f - >/dev/null
  local i
  for i in $(seq 60); do
    kubectl_ get --raw /apis/external.metrics.k8s.io/v1beta1 >/dev/null 2>&1 && return 0
    sleep 1
  done
  echo "keda.sh: the external metrics API (v1beta1.external.metrics.k8s.io) does not answer:" >&2
  kubectl_ get apiservice v1beta1.external.metrics.k8s.io -o jsonpath='{.status.conditions[0].message}' >&2
  echo >&2
  return 1
}

delete() {
  local left
  left=$(kubectl_ get scaledobjects.keda.sh --all-namespaces -o name 2>/dev/null || true)
  if [[ -n $left ]]; then
    echo "keda.sh: ScaledObjects remain (their finalizer needs the operator; delete them or their releases first): $(echo "$left" | tr '\n' ' ')" >&2
    return 1
  fi
  kubectl_ delete apiservice v1beta1.external.metrics.k8s.io --ignore-not-found >/dev/null
  [[ -f $base/keda.yaml ]] || return 0
  kubectl_ delete -f "$base/keda.yaml" --ignore-not-found --wait=true >/dev/null
}

case ${1:-deploy} in
  build) build ;;
  deploy) deploy ;;
  delete) delete ;;
  *) echo "keda.sh: unknown command '$1' (build, deploy or delete)" >&2; exit 2 ;;
esac
