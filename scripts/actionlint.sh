#!/usr/bin/env bash
# `make lint`'s check of the GitHub Actions workflows (.github/workflows): actionlint, built from
# the Go module proxy once by install/go-tool.sh into $OBSERVATORY_CACHE/actionlint/<version>/bin,
# then run over the workflows. Extra arguments go to actionlint.
set -euo pipefail
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=versions.sh
source "$REPO_ROOT/scripts/versions.sh"
bin=$("$REPO_ROOT/scripts/install/go-tool.sh" "github.com/rhysd/actionlint@$ACTIONLINT_VERSION" ./cmd/actionlint)
cd "$REPO_ROOT"
exec "$bin/actionlint" "$@"
