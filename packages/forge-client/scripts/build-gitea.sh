#!/usr/bin/env bash
# Builds a Gitea server binary from the Go module proxy and caches it.
#
#   scripts/build-gitea.sh            -> prints the cache directory holding `gitea`, `templates/`, `options/`
#   scripts/build-gitea.sh --built    -> exits 0 when that directory is complete, 1 otherwise (builds nothing)
#
# Cache layout: ${OBSERVATORY_CACHE:-<repo>/.cache}/gitea/<version>/{gitea,templates,options,BUILD_OK,bin/}
# A warm run (BUILD_OK present) does nothing but print the directory.
#
# How: scripts/install/go-tool.sh (a wrapper module that requires code.gitea.io/gitea at
# GITEA_VERSION and repeats that release's `replace` lines, ignored when the module is a
# dependency) builds its main package with the sqlite tags (cgo) into <version>/bin; the binary is
# linked beside templates/ and options/. No `bindata` tag, so the server reads those two from disk:
# they are copied from the module source and the test server points STATIC_ROOT_PATH there.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "$here/../../.." && pwd)"
# The pinned version (scripts/versions.sh) unless GITEA_VERSION names another.
GITEA_VERSION="${GITEA_VERSION:-$(source "$repo_root/scripts/versions.sh" && echo "$GITEA_VERSION")}"
cache_root="${OBSERVATORY_CACHE:-$repo_root/.cache}"
out="$cache_root/gitea/$GITEA_VERSION"

built() { [[ -f "$out/BUILD_OK" && -x "$out/gitea" ]]; }
if [[ ${1:-} == --built ]]; then built; exit; fi
if built; then
  echo "$out"
  exit 0
fi

# A non-login shell may lack Go's usual install directories on PATH.
if ! command -v go >/dev/null; then
  for d in /usr/local/go/bin "${HOME:-/nonexistent}/go/bin" /usr/lib/go/bin; do
    if [[ -x "$d/go" ]]; then PATH="$d:$PATH"; break; fi
  done
fi
command -v go >/dev/null || { echo "build-gitea: go toolchain (>= 1.26) not found on PATH" >&2; exit 1; }
# Go needs a home for its caches; without HOME keep them under the cache root.
if [[ -z "${HOME:-}" ]]; then
  export GOCACHE="${GOCACHE:-$cache_root/go-build}" GOMODCACHE="${GOMODCACHE:-$cache_root/go-mod}" GOPATH="${GOPATH:-$cache_root/go}"
fi
command -v gcc >/dev/null || command -v cc >/dev/null || { echo "build-gitea: a C compiler is needed (cgo sqlite)" >&2; exit 1; }

mkdir -p "$cache_root/gitea"
# One builder at a time (parallel test runs share the cache).
exec 9>"$cache_root/gitea/.build-$GITEA_VERSION.lock"
flock 9
if built; then
  echo "$out"
  exit 0
fi

# The binary through the repository's one Go recipe (a wrapper module repeating the release's
# replace lines) into $out/bin; templates/ and options/ from the module source beside it.
start=$(date +%s)
bin="$(OBSERVATORY_CACHE="$cache_root" "$repo_root/scripts/install/go-tool.sh" --cgo \
  --tags 'sqlite sqlite_unlock_notify' --ldflags "-X main.Version=${GITEA_VERSION#v} -X main.Tags=sqlite,sqlite_unlock_notify" \
  "code.gitea.io/gitea@$GITEA_VERSION" code.gitea.io/gitea)"
moddir="$(go mod download -json "code.gitea.io/gitea@$GITEA_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -d "$moddir" ]] || { echo "build-gitea: module download failed" >&2; exit 1; }
rm -rf "$out/templates" "$out/options" "$out/gitea" "$out/BUILD_OK"
cp -R "$moddir/templates" "$out/templates"
cp -R "$moddir/options" "$out/options"
chmod -R u+w "$out/templates" "$out/options"
ln "$bin/gitea" "$out/gitea"
"$out/gitea" --version >&2
echo "$GITEA_VERSION built in $(( $(date +%s) - start ))s" >"$out/BUILD_OK"
echo "build-gitea: cached in $out" >&2
echo "$out"
