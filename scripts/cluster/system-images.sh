#!/usr/bin/env bash
# Builds the two images the cluster itself needs, once, as OCI archives in the cache (no
# registry is reachable here): the pause image (sandbox of every pod) from pause.c, and CoreDNS
# from the binary that build-binaries.sh made. Prints the archives' paths.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"
out=$OBSERVATORY_CACHE/kubernetes/$K8S_VERSION/images
mkdir -p "$out"
# One packer at a time (scripts/test/prebuild.sh and up.sh may both get here at once).
exec 9>"$out/.lock"
flock 9

if [[ ! -f $out/pause.tar || $here/pause.c -nt $out/pause.tar ]]; then
  root=$(mktemp -d) && chmod 755 "$root"
  gcc -static -Os -s -o "$root/pause" "$here/pause.c"
  "$here/oci-image.sh" "$PAUSE_IMAGE" "$root" '["/pause"]' "$out/pause.tar"
  rm -rf "$root"
fi
if [[ ! -f $out/coredns.tar || $K8S_BIN/coredns -nt $out/coredns.tar ]]; then
  root=$(mktemp -d) && chmod 755 "$root"
  cp "$K8S_BIN/coredns" "$root/coredns"
  # A binary built with cgo needs its shared libraries (the loader and libc) beside it.
  libs=$(ldd "$K8S_BIN/coredns" 2>/dev/null | grep -o '/[^ ]*' || true)
  for lib in $libs; do cp --parents -L "$lib" "$root/"; done
  "$here/oci-image.sh" "$COREDNS_IMAGE" "$root" '["/coredns"]' "$out/coredns.tar"
  rm -rf "$root"
fi
echo "$out/pause.tar $out/coredns.tar"
