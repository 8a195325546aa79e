#!/usr/bin/env bash
# oauth2-proxy's image on the cluster of `make cluster`, for the search proxy-mode suite (the
# add-on recipe: addon.sh). The suite applies the Deployment itself: its upstream and OpenID
# provider are the suite's own.
#   build   the binary of ../install/oauth2-proxy.sh (the Go module proxy) packed as a one-layer
#           image into $OBSERVATORY_CACHE/oauth2-proxy/<version>, once; prints the archive's path
#   deploy  build, then import the image ($OAUTH2_PROXY_IMAGE) into the cluster's containerd
#   delete  removes the image from the cluster's containerd
# KUBECONFIG names the cluster.
# shellcheck source=addon.sh
source "$(dirname "$0")/addon.sh"

OAUTH2_PROXY_IMAGE=localhost/observatory/oauth2-proxy:$OAUTH2_PROXY_VERSION
out=$OBSERVATORY_CACHE/oauth2-proxy/$OAUTH2_PROXY_VERSION/oauth2-proxy.tar

build() {
  if [[ ! -f $out ]]; then
    local bin
    bin=$("$addon_here/../install/oauth2-proxy.sh")
    addon_image "$OAUTH2_PROXY_IMAGE" "$out" '["/oauth2-proxy"]' "$bin=/oauth2-proxy"
  fi
  echo "$out"
}

deploy() {
  build >/dev/null
  addon_import "$out"
  echo "$OAUTH2_PROXY_IMAGE"
}

delete() {
  ctr --address "$CLUSTER_DIR/run/containerd.sock" -n k8s.io images rm "$OAUTH2_PROXY_IMAGE" >/dev/null 2>&1 || true
}

addon_main "$@"
