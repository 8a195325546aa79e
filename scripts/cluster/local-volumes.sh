#!/usr/bin/env bash
# PersistentVolumes for the evaluation profile's claims on a cluster without a storage provisioner
# (the one of `make cluster`): one hostPath volume per claim of the bundled Kafka and PostgreSQL,
# bound to that claim in advance, in a folder of this machine owned by the image's user (hostPath
# ignores fsGroup). Does nothing when the cluster has a default StorageClass (kind, clouds).
#   local-volumes.sh create <namespace> <release>
#   local-volumes.sh delete <namespace>     (the volumes and their folders: the data is gone)
# KUBECONFIG names the cluster; LOCAL_VOLUME_DIR the folders' parent (default below).
set -euo pipefail
kubectl=${KUBECTL:-kubectl}
base=${LOCAL_VOLUME_DIR:-/var/tmp/observatory-volumes}
action=${1:?usage: local-volumes.sh create <namespace> <release> | delete <namespace>}
ns=${2:?the namespace}
label=observatory.dev/local-volume-namespace

case $action in
  create)
    release=${3:?the release}
    default=$($kubectl get storageclass -o jsonpath='{range .items[*]}{.metadata.annotations.storageclass\.kubernetes\.io/is-default-class}{"\n"}{end}')
    if grep -qx true <<<"$default"; then
      echo "local-volumes: the cluster has a default StorageClass; nothing to do"
      exit 0
    fi
    # claim name, owner uid (the StatefulSets' volumeClaimTemplates are named `data`)
    for claim in "data-$release-kafka-0 1000" "data-$release-postgresql-0 999"; do
      read -r name uid <<<"$claim"
      dir=$base/$ns/$name
      mkdir -p "$dir"
      chown "$uid:$uid" "$dir"
      $kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata:
  name: $ns-$name
  labels: { $label: $ns }
spec:
  capacity: { storage: 8Gi }
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  claimRef: { namespace: $ns, name: $name }
  hostPath: { path: $dir, type: Directory }
YAML
      echo "local-volumes: $ns-$name -> $dir"
    done
    ;;
  delete)
    $kubectl delete persistentvolume -l "$label=$ns" --wait=false >/dev/null
    rm -rf "${base:?}/$ns"
    ;;
  *)
    echo "local-volumes: unknown action $action" >&2
    exit 2
    ;;
esac
