#!/usr/bin/env bash
# `make demo`: the chart's evaluation profile on the cluster of `make cluster` (or KUBECONFIG's):
# the images (make images, skipped with DEMO_IMAGES=0), then `helm upgrade --install` with the two
# bundled switches, Ready, `helm test`, and the NOTES. The bundled Kafka's and PostgreSQL's claims
# bind through the cluster's default StorageClass (`make cluster`'s is local-path).
# DEMO_NAMESPACE (default observatory-demo) and DEMO_RELEASE (obs) name the install.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/cluster/config.sh"
source "$root/scripts/images/config.sh"
export KUBECONFIG=${KUBECONFIG:-$KUBECONFIG_OUT}
kubectl=$K8S_BIN/kubectl
[[ -x $kubectl ]] || kubectl=kubectl
export KUBECTL=$kubectl
ns=${DEMO_NAMESPACE:-observatory-demo}
release=${DEMO_RELEASE:-obs}
helm=$("$root/scripts/install/helm.sh")

if ! $kubectl get nodes >/dev/null 2>&1; then
  echo "demo: no cluster answers at $KUBECONFIG: start one with make cluster" >&2
  exit 1
fi
[[ ${DEMO_IMAGES:-1} == 0 ]] || "$root/scripts/images/build.sh"
$kubectl create namespace "$ns" --dry-run=client -o yaml | $kubectl apply -f - >/dev/null
# The CRD as the cluster suites apply it (Helm 4's server-side apply of crds/ would conflict with
# kubectl's field manager on a shared cluster): applied here, the install skips crds/.
$kubectl apply -f "$root/charts/observatory/crds/pipeline.yaml" >/dev/null
echo "demo: installing the evaluation profile as $release in $ns (Ready within 8 min)"
# The images of `make images` (localhost/observatory/<component>:$IMAGE_TAG) instead of a registry's.
"$helm" upgrade --install "$release" "$root/charts/observatory" --namespace "$ns" --skip-crds --wait --timeout 8m \
  --set kafka.bundled.enabled=true --set database.bundled.enabled=true \
  --set image.registry="${IMAGE_PREFIX%%/*}" --set image.tag="$IMAGE_TAG" >/dev/null
"$helm" test "$release" --namespace "$ns" --logs
"$helm" get notes "$release" --namespace "$ns"
cat <<TEXT
Remove it: helm uninstall $release -n $ns; then the data, kept by uninstall:
  kubectl -n $ns delete pvc --all; kubectl -n $ns delete secret $release-store
TEXT
