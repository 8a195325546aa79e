#!/usr/bin/env bash
# Installs Prometheus and promtool from Debian (bookworm: 2.42) unless they are already on PATH.
# Idempotent and quick when installed; needs root (or sudo) the first time. The service the
# package registers is not started: tests run their own Prometheus on a free port.
set -euo pipefail

if command -v promtool >/dev/null && command -v prometheus >/dev/null; then exit 0; fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-prometheus: run as root or install sudo" >&2; exit 1; }
  sudo=(sudo)
fi
apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300)
# A stale package list gives 404s for superseded versions: refresh it once and retry.
"${apt[@]}" install -y --no-install-recommends prometheus >&2 ||
  { "${apt[@]}" update >&2 && "${apt[@]}" install -y --no-install-recommends prometheus >&2; }
command -v promtool >/dev/null || { echo "install-prometheus: promtool missing after install" >&2; exit 1; }
