#!/usr/bin/env bash
# Packs a folder as a one-layer OCI image archive that `ctr images import` accepts, without any
# registry or Docker: layer tar + gzip, sha256 digests and three JSON documents.
# Usage: oci-image.sh <image ref> <root folder> <entrypoint as a JSON array> <out.tar>
set -euo pipefail
ref=$1 root=$2 entrypoint=$3 out=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
blobs=$work/layout/blobs/sha256
mkdir -p "$blobs"

sha() { sha256sum "$1" | cut -d' ' -f1; }
# put <file> <media type>: stores a blob, prints its descriptor
put() {
  local d
  d=$(sha "$1")
  cp "$1" "$blobs/$d"
  printf '{"mediaType":"%s","digest":"sha256:%s","size":%s}' "$2" "$d" "$(stat -c %s "$1")"
}

tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$root" -cf "$work/layer.tar" .
diff_id=$(sha "$work/layer.tar")
gzip -n "$work/layer.tar"
layer=$(put "$work/layer.tar.gz" application/vnd.oci.image.layer.v1.tar+gzip)

printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":%s,"Env":["PATH=/usr/local/bin:/usr/bin:/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
  "$entrypoint" "$diff_id" >"$work/config.json"
config=$(put "$work/config.json" application/vnd.oci.image.config.v1+json)

printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":%s,"layers":[%s]}' \
  "$config" "$layer" >"$work/manifest.json"
manifest=$(put "$work/manifest.json" application/vnd.oci.image.manifest.v1+json)

printf '{"schemaVersion":2,"manifests":[%s]}' \
  "${manifest%\}},\"annotations\":{\"io.containerd.image.name\":\"$ref\",\"org.opencontainers.image.ref.name\":\"${ref##*:}\"}}" \
  >"$work/layout/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$work/layout/oci-layout"
tar -C "$work/layout" -cf "$out.tmp" . && mv "$out.tmp" "$out"
