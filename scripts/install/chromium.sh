#!/usr/bin/env bash
# Installs Debian's Chromium for the search service's browser tests (playwright-core drives it;
# Playwright's own browser download is not used). Does nothing when CHROMIUM_PATH already exists.
set -euo pipefail
path="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ -x "$path" ]; then exit 0; fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "installing Debian's chromium (for the browser tests)" >&2
# shellcheck source=apt-lock.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-lock.sh"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
