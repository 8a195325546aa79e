#!/usr/bin/env bash
# Installs schemathesis (PyPI, pinned in ../versions.sh) into a virtualenv under
# $OBSERVATORY_CACHE and prints the path of its `st` command. Idempotent and quick when the pinned version is already there.
# Needs python3 (3.9+) with the venv module; downloads from PyPI the first time only.
set -euo pipefail

# shellcheck source=../versions.sh
source "$(dirname "$0")/../versions.sh"
version=$SCHEMATHESIS_VERSION
cache=${OBSERVATORY_CACHE:-$(cd "$(dirname "$0")/../.." && pwd)/.cache}
venv="$cache/schemathesis-$version"
# Written last: a venv without it is an interrupted install and is made again.
done_mark="$venv/.installed"

if [ ! -f "$done_mark" ]; then
  command -v python3 >/dev/null || { echo "install-schemathesis: python3 is required" >&2; exit 1; }
  rm -rf "$venv"
  mkdir -p "$cache"
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version" >&2
  touch "$done_mark"
fi
echo "$venv/bin/st"
