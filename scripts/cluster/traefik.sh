#!/usr/bin/env bash
# Traefik v3, the Ingress and Gateway API controller the ingress suite routes through, on the
# cluster of `make cluster` (the add-on recipe: addon.sh):
#   build   builds it from the Go module proxy and packs its one-layer image into
#           $OBSERVATORY_CACHE/traefik/<version>-k8s<K8S_VERSION> (built against the cluster's own
#           k8s.io modules, go-tool.sh --k8s), once; prints the archive's path
#   deploy  (the default) build, import the image, apply the Gateway API CRDs (cdk8s/vendor), then
#           manifests/traefik.yaml (namespace observatory-traefik); waits until it is Ready and
#           prints the image. Idempotent.
#   delete  removes the namespace and the cluster-scoped objects (the CRDs stay, as other CRDs do).
# Traefik's go.mod has replace lines (forks of two libraries), which go-tool.sh's wrapper module
# repeats. KUBECONFIG names the cluster.
# shellcheck source=addon.sh
source "$(dirname "$0")/addon.sh"

TRAEFIK_IMAGE=localhost/observatory/traefik:$TRAEFIK_VERSION
out=$OBSERVATORY_CACHE/traefik/$TRAEFIK_VERSION-k8s$K8S_VERSION/traefik.tar

build() {
  if [[ ! -f $out ]]; then
    local bin
    bin=$(go_tool --k8s "$K8S_VERSION" --ldflags "-X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION" \
      "github.com/traefik/traefik/v3@$TRAEFIK_VERSION" ./cmd/traefik)
    addon_image "$TRAEFIK_IMAGE" "$out" '["/traefik"]' "$bin/traefik=/traefik"
  fi
  echo "$out"
}

deploy() {
  build >/dev/null
  addon_import "$out"
  addon_crds "$REPO_ROOT/cdk8s/vendor/gateway-api-crds/"
  sed "s#__TRAEFIK_IMAGE__#$TRAEFIK_IMAGE#" "$addon_here/manifests/traefik.yaml" | kubectl apply -f - >/dev/null
  addon_rollout observatory-traefik 120s deployment/traefik
  echo "$TRAEFIK_IMAGE"
}

delete() {
  addon_delete observatory-traefik clusterrolebinding/observatory:traefik clusterrole/observatory:traefik \
    ingressclass/observatory-traefik gatewayclass/observatory-traefik
}

addon_main "$@"
