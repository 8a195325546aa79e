# shellcheck shell=bash
# The recipe of a cluster add-on, sourced by each add-on script (metrics-server.sh, traefik.sh,
# prometheus-operator.sh, keda.sh), which keeps only what is its own: module, version, images,
# manifests, what to wait for. An add-on script defines `build`, `deploy` and `delete` and ends
# with `addon_main "$@"`. The functions are listed in README.md ("Cluster add-ons").
set -euo pipefail
addon_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=config.sh
source "$addon_here/config.sh"
addon_name=$(basename "$0")
export OBSERVATORY_CACHE

# The cluster's kubectl on KUBECONFIG (default: make cluster's).
kubectl() { "$K8S_BIN/kubectl" --kubeconfig "${KUBECONFIG:-$KUBECONFIG_OUT}" "$@"; }

# Builds Go binaries once (../install/go-tool.sh arguments), prints their folder.
go_tool() { "$addon_here/../install/go-tool.sh" "$@"; }

# module_dir <module>@<version>: the module's source in Go's module cache.
module_dir() {
  GOFLAGS=-buildvcs=false go mod download -json "$1" | sed -n 's/^\s*"Dir": "\(.*\)",\?$/\1/p'
}

# addon_module_crds <module>@<version> <folder> <dest>: the release's CRDs (<folder>/*.yaml of
# its source) into <dest>, once.
addon_module_crds() {
  local dest=$3
  [[ -d $dest ]] && return 0
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  cp "$(module_dir "$1")/$2"/*.yaml "$dest.tmp/"
  chmod u+w "$dest.tmp"/* && mv "$dest.tmp" "$dest"
}

# addon_image <ref> <out.tar> <entrypoint JSON> <spec>...: a one-layer image archive unless
# <out.tar> exists; a spec <file>=<path> copies a file, =<path> makes a folder any user may write.
addon_image() {
  local ref=$1 out=$2 entrypoint=$3
  shift 3
  [[ -f $out ]] && return 0
  local root spec
  root=$(mktemp -d)
  # shellcheck disable=SC2064 # expand now: $root is local
  trap "rm -rf '$root'" RETURN
  chmod 755 "$root"
  for spec in "$@"; do
    if [[ $spec == =* ]]; then
      mkdir -p "$root${spec#=}" && chmod 1777 "$root${spec#=}"
    else
      mkdir -p "$(dirname "$root${spec#*=}")"
      cp "${spec%%=*}" "$root${spec#*=}"
    fi
  done
  mkdir -p "$(dirname "$out")"
  "$addon_here/oci-image.sh" "$ref" "$root" "$entrypoint" "$out"
}

# addon_import <tar>...: into the cluster's containerd.
addon_import() {
  local tar
  for tar in "$@"; do
    ctr --address "$CLUSTER_DIR/run/containerd.sock" -n k8s.io images import "$tar" >/dev/null
  done
}

# addon_crds <file or folder>...: server-side apply (CRDs are too large for the last-applied
# annotation), then wait until they are Established.
addon_crds() {
  local f args=()
  for f in "$@"; do args+=(-f "$f"); done
  kubectl apply --server-side --force-conflicts "${args[@]}" >/dev/null
  kubectl wait --for condition=Established --timeout 60s "${args[@]}" >/dev/null
}

# addon_rollout <namespace> <timeout> <kind/name>...: on failure lists the namespace's pods.
addon_rollout() {
  local ns=$1 timeout=$2 object
  shift 2
  for object in "$@"; do
    if ! kubectl -n "$ns" rollout status "$object" --timeout "$timeout" >/dev/null; then
      echo "$addon_name: $object did not become ready:" >&2
      kubectl -n "$ns" get pods -o wide >&2
      return 1
    fi
  done
}

# addon_until <seconds> <command>...: runs the command every second until it succeeds.
addon_until() {
  local seconds=$1 i
  shift
  for ((i = 0; i < seconds; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 1
  done
  return 1
}

# An aggregated API (metrics-server, KEDA's adapter) sees every request the API server forwards as
# anonymous unless the API server runs the aggregation layer (--requestheader-client-ca-file).
addon_needs_aggregation() {
  [[ -n $(kubectl -n kube-system get configmap extension-apiserver-authentication \
    -o jsonpath='{.data.requestheader-client-ca-file}') ]] && return 0
  echo "$addon_name: the API server has no aggregation layer (no --requestheader-client-ca-file); restart \`make cluster\` (up.sh sets it)" >&2
  return 1
}

# addon_delete <namespace> <kind/name>...: the namespace (waiting) and cluster-scoped objects,
# each if present.
addon_delete() {
  local ns=$1
  shift
  kubectl delete namespace "$ns" --ignore-not-found --wait=true >/dev/null
  (($# == 0)) || kubectl delete "$@" --ignore-not-found >/dev/null
}

# addon_main <command>: the script's build, deploy (the default), delete or, where the script
# defines it, crds (the CRDs alone, without building anything).
# A build, deploy or crds holds the add-on's lock: scripts/test/prebuild.sh may be building it meanwhile.
addon_main() {
  local command=${1:-deploy} commands='build, deploy or delete'
  declare -F crds >/dev/null && commands='build, deploy, delete or crds'
  [[ $command == crds ]] && ! declare -F crds >/dev/null && command=none
  case $command in
    build | deploy | crds)
      mkdir -p "$OBSERVATORY_CACHE"
      exec 9>"$OBSERVATORY_CACHE/.$addon_name.lock"
      flock 9
      "$command"
      ;;
    delete) delete ;;
    *) echo "$addon_name: unknown command '${1:-}' ($commands)" >&2; exit 2 ;;
  esac
}
