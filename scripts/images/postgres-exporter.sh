#!/usr/bin/env bash
# The postgres_exporter image for the cluster suites, once, cached: Debian's
# prometheus-postgres-exporter binary (scripts/install/prometheus.sh) and the libraries `ldd`
# names, packed by scripts/cluster/oci-image.sh, imported into the cluster's containerd when it
# runs. Prints the image reference.
# Why Debian's build: the Go module proxy here refuses github.com/prometheus-community/postgres_exporter
# (403), so it cannot be built from source; Debian's 0.11 reads the same DATA_SOURCE_* variables.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../cluster/config.sh"
source "$here/cache.sh"
"$REPO_ROOT/scripts/install/prometheus.sh"

bin=$(command -v prometheus-postgres-exporter)
version=$("$bin" --version 2>&1 | sed -n 's/^postgres_exporter, version \([^ ]*\).*/\1/p')
# Named as the chart's default image (monitoring.postgresExporter.image in cdk8s/src/values.ts), so
# the evaluation profile runs with it as it does with the Kafka and PostgreSQL stand-ins
# (build-standins.sh); the binary inside is Debian's $version.
ref=quay.io/prometheuscommunity/postgres-exporter:v0.17.1
out=$OBSERVATORY_CACHE/images/postgres-exporter-$version-standin.tar
mkdir -p "$(dirname "$out")"
if [[ ! -f $out || $bin -nt $out ]]; then
  root=$(mktemp -d) && chmod 755 "$root"
  trap 'rm -rf "$root"' EXIT
  mkdir -p "$root/bin"
  cp "$bin" "$root/bin/postgres_exporter"
  for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do cp --parents -L "$lib" "$root/"; done
  "$REPO_ROOT/scripts/cluster/oci-image.sh" "$ref" "$root" '["/bin/postgres_exporter"]' "$out"
fi
sock=$CLUSTER_DIR/run/containerd.sock
if [[ -S $sock ]]; then import_archive "$sock" "$out" "$ref" >/dev/null; fi
echo "$ref"
