#!/usr/bin/env bash
# Rancher's local-path-provisioner as the default StorageClass `local-path` of `make cluster`, as
# kind ships it, so a claim without a storage class (the evaluation profile's Kafka and
# PostgreSQL) binds to a folder of this machine (the add-on recipe: addon.sh):
#   build   builds it from the Go module proxy and packs two one-layer images into
#           $OBSERVATORY_CACHE/local-path-provisioner/<version>-k8s<K8S_VERSION>, once: the provisioner
#           (built against the cluster's own k8s.io modules, go-tool.sh --k8s), and the
#           helper its pods run to make and remove a volume's folder (Debian's static busybox as
#           sh, mkdir and rm, the three commands of its setup and teardown scripts); prints
#           the archives' paths
#   deploy  build, import the images, apply manifests/local-path-provisioner.yaml (namespace
#           observatory-storage, volumes under $LOCAL_PATH_DIR) and wait for the rollout. Idempotent.
#   delete  removes the namespace, the StorageClass and the cluster-scoped RBAC.
# up.sh deploys it once the node is Ready. KUBECONFIG names the cluster.
# shellcheck source=addon.sh
source "$(dirname "$0")/addon.sh"

LOCAL_PATH_DIR=${LOCAL_PATH_DIR:-$CLUSTER_DIR/local-path}
PROVISIONER_IMAGE=localhost/observatory/local-path-provisioner:$LOCAL_PATH_PROVISIONER_VERSION
HELPER_IMAGE=localhost/observatory/local-path-helper:$LOCAL_PATH_PROVISIONER_VERSION
dir=$OBSERVATORY_CACHE/local-path-provisioner/$LOCAL_PATH_PROVISIONER_VERSION-k8s$K8S_VERSION
out=$dir/local-path-provisioner.tar helper_out=$dir/local-path-helper.tar

build() {
  if [[ ! -f $out ]]; then
    local bin
    bin=$(go_tool --k8s "$K8S_VERSION" "github.com/rancher/local-path-provisioner@$LOCAL_PATH_PROVISIONER_VERSION" github.com/rancher/local-path-provisioner)
    addon_image "$PROVISIONER_IMAGE" "$out" '["/local-path-provisioner"]' \
      "$bin/local-path-provisioner=/local-path-provisioner"
  fi
  if [[ ! -f $helper_out ]]; then
    # busybox picks its applet by the name it is run as.
    addon_image "$HELPER_IMAGE" "$helper_out" '["/bin/sh"]' \
      /bin/busybox=/bin/sh /bin/busybox=/bin/mkdir /bin/busybox=/bin/rm
  fi
  echo "$out $helper_out"
}

deploy() {
  build >/dev/null
  addon_import "$out" "$helper_out"
  sed -e "s|@PROVISIONER_IMAGE@|$PROVISIONER_IMAGE|g" -e "s|@HELPER_IMAGE@|$HELPER_IMAGE|g" \
    -e "s|@LOCAL_PATH_DIR@|$LOCAL_PATH_DIR|g" \
    "$addon_here/manifests/local-path-provisioner.yaml" | kubectl apply -f - >/dev/null
  addon_rollout observatory-storage 120s deployment/local-path-provisioner
}

delete() {
  addon_delete observatory-storage storageclass/local-path \
    clusterrolebinding/observatory:local-path-provisioner clusterrole/observatory:local-path-provisioner
}

addon_main "$@"
