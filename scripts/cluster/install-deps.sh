#!/usr/bin/env bash
# Installs, from Debian, what the cluster and the image build need, when it is missing:
# containerd, runc, the CNI plugins, iptables and conntrack (kube-proxy), ipset (kube-router's
# firewall), openssl (certificates),
# gcc (the static pause binary), docker.io, mmdebstrap and jq (images: jq reads their archives),
# busybox-static (the local-path helper image). Needs root (CI runs as root).
set -euo pipefail

packages=(containerd runc containernetworking-plugins iptables conntrack ipset openssl gcc libc6-dev docker.io mmdebstrap jq busybox-static)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "installing from Debian: ${missing[*]}"
# shellcheck source=../install/apt-lock.sh
source "$(dirname "${BASH_SOURCE[0]}")/../install/apt-lock.sh"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# --no-install-recommends: docker.io would otherwise pull in extra tooling we never use.
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
