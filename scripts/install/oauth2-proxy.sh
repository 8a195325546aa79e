#!/usr/bin/env bash
# Builds the pinned oauth2-proxy (OAUTH2_PROXY_VERSION of ../versions.sh) from the Go module proxy
# with go-tool.sh into $OBSERVATORY_CACHE/oauth2-proxy/<version>/bin and prints the binary's path:
# the real proxy in front of search in its proxy-mode test. Idempotent: a cached binary returns at once.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../versions.sh
source "$here/../versions.sh"
bin=$("$here/go-tool.sh" "github.com/oauth2-proxy/oauth2-proxy/v7@$OAUTH2_PROXY_VERSION" github.com/oauth2-proxy/oauth2-proxy/v7)
echo "$bin/oauth2-proxy"
