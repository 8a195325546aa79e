#!/usr/bin/env bash
# Builds a Gitea server binary from the Go module proxy and caches it.
#
#   scripts/build-gitea.sh            -> prints the cache directory holding `gitea`, `templates/`, `options/`
#
# Cache layout: ${OBSERVATORY_CACHE:-<repo>/.cache}/gitea/<version>/{gitea,templates,options,BUILD_OK}
# A warm run (BUILD_OK present) does nothing but print the directory.
#
# How: a throw-away wrapper module requires code.gitea.io/gitea at GITEA_VERSION and copies that
# release's `replace` lines (they are ignored when the module is a dependency, and the build fails
# without them); `go build` compiles the dependency's main package with the sqlite tags (cgo). No
# `bindata` tag, so the server reads templates/ and options/ from disk: they are copied from the
# module source next to the binary and the test server points STATIC_ROOT_PATH there.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "$here/../../.." && pwd)"
# The pinned version (scripts/versions.sh) unless GITEA_VERSION names another.
GITEA_VERSION="${GITEA_VERSION:-$(source "$repo_root/scripts/versions.sh" && echo "$GITEA_VERSION")}"
cache_root="${OBSERVATORY_CACHE:-$repo_root/.cache}"
out="$cache_root/gitea/$GITEA_VERSION"

if [[ -f "$out/BUILD_OK" && -x "$out/gitea" ]]; then
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
if [[ -f "$out/BUILD_OK" && -x "$out/gitea" ]]; then
  echo "$out"
  exit 0
fi

work="$(mktemp -d "$cache_root/gitea/.work-XXXXXX")"
trap 'rm -rf "$work"' EXIT
cd "$work"

start=$(date +%s)
echo "build-gitea: fetching code.gitea.io/gitea@$GITEA_VERSION from the module proxy" >&2
go mod download -json "code.gitea.io/gitea@$GITEA_VERSION" >download.json
moddir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' download.json)"
gomod="$(sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p' download.json)"
[[ -d "$moddir" && -f "$gomod" ]] || { echo "build-gitea: module download failed" >&2; cat download.json >&2; exit 1; }
if ! grep -q '^module code.gitea.io/gitea$' "$gomod"; then
  echo "build-gitea: $GITEA_VERSION does not declare module code.gitea.io/gitea ($(head -1 "$gomod")); pick another GITEA_VERSION" >&2
  exit 1
fi
goline="$(grep -m1 '^go ' "$gomod")"

{
  echo "module observatory.invalid/gitea-build"
  echo
  echo "$goline"
  echo
  echo "require code.gitea.io/gitea $GITEA_VERSION"
  echo
  # Copy the release's replace directives: single-line and block form.
  awk '
    /^replace[[:space:]]*\($/ { inblock = 1; print; next }
    inblock { print; if ($0 ~ /^\)/) inblock = 0; next }
    /^replace[[:space:]]/ { print }
  ' "$gomod"
} >go.mod

echo "build-gitea: compiling (cgo, tags sqlite sqlite_unlock_notify); this takes several minutes cold" >&2
CGO_ENABLED=1 GOFLAGS=-mod=mod go build \
  -tags 'sqlite sqlite_unlock_notify' \
  -trimpath \
  -ldflags "-s -w -X main.Version=${GITEA_VERSION#v} -X main.Tags=sqlite,sqlite_unlock_notify" \
  -o "$work/gitea" code.gitea.io/gitea

staging="$work/out"
mkdir -p "$staging"
mv "$work/gitea" "$staging/gitea"
cp -R "$moddir/templates" "$staging/templates"
cp -R "$moddir/options" "$staging/options"
chmod -R u+w "$staging"
"$staging/gitea" --version >&2
echo "$GITEA_VERSION built in $(( $(date +%s) - start ))s" >"$staging/BUILD_OK"

rm -rf "$out"
mv "$staging" "$out"
echo "build-gitea: cached in $out" >&2
echo "$out"
