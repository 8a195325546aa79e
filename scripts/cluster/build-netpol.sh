#!/usr/bin/env bash
# Builds the cluster's NetworkPolicy enforcer, kube-network-policies (Kubernetes SIG Network's
# nftables + nfqueue implementation, the one kind ships), from the Go module proxy into
# $OBSERVATORY_CACHE/kube-network-policies/<version>/bin, and packs it as a one-layer image.
# Prints the image archive's path. Idempotent: a cached archive returns at once.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"
dir=$OBSERVATORY_CACHE/kube-network-policies/$NETPOL_VERSION
out=$dir/netpol.tar

if [[ ! -f $out ]]; then
  mkdir -p "$dir"
  work=$(mktemp -d "$dir/.build-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "building kube-network-policies $NETPOL_VERSION (about a minute, once)" >&2
  started=$SECONDS
  # No replace lines in its go.mod: `go install` works. Static (no cgo): the image is one file.
  CGO_ENABLED=0 GOBIN=$work/bin GOFLAGS=-buildvcs=false GOTOOLCHAIN=local \
    go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kube-network-policies/cmd@$NETPOL_VERSION" >&2
  mkdir -p "$work/root"
  mv "$work/bin/cmd" "$work/root/kube-network-policies"
  "$here/oci-image.sh" "$NETPOL_IMAGE" "$work/root" '["/kube-network-policies"]' "$out"
  echo "built kube-network-policies in $((SECONDS - started)) s" >&2
fi
echo "$out"
