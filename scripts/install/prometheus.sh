#!/usr/bin/env bash
# Installs Prometheus, promtool and postgres_exporter from Debian (bookworm: 2.42, 0.11) unless they
# are already on PATH.
# Idempotent and quick when installed; needs root (or sudo) the first time. The service the
# package registers is not started: tests run their own Prometheus on a free port.
set -euo pipefail

packages=(prometheus prometheus-postgres-exporter)
binaries=(prometheus promtool prometheus-postgres-exporter)
missing() { for b in "${binaries[@]}"; do command -v "$b" >/dev/null || return 0; done; return 1; }
missing || exit 0

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-prometheus: run as root or install sudo" >&2; exit 1; }
  sudo=(sudo)
fi
# shellcheck source=apt-lock.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-lock.sh"
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300)
# A stale package list gives 404s for superseded versions: refresh it once and retry.
"${apt[@]}" install -y --no-install-recommends "${packages[@]}" >&2 ||
  { "${apt[@]}" update >&2 && "${apt[@]}" install -y --no-install-recommends "${packages[@]}" >&2; }
if missing; then echo "install-prometheus: ${binaries[*]} not all on PATH after install" >&2; exit 1; fi
