#!/usr/bin/env bash
# Builds Go programs from the Go module proxy, once, into $OBSERVATORY_CACHE/<name>/<version>/bin
# and prints that folder: the one recipe behind every Go program the project builds (Kubernetes,
# etcd, CoreDNS, kube-router, Helm, actionlint, Traefik, the Prometheus Operator and Prometheus,
# metrics-server, KEDA, Gitea).
#
#   go-tool.sh [--name N] [--ldflags F] [--tags T] [--nested V] [--k8s V] [--cgo] [--main F] <module>@<version> <package>...
#
#   <package>  an import path, or ./<path> inside the module; the binary takes its last element
#              (the one before a /vN suffix, as `go build` names it)
#   --name     the cache folder (default: the module path's last element, a /vN suffix left out)
#   --ldflags  added to "-s -w" (version stamps: -X ...)
#   --tags     build tags
#   --nested   the version of the module's nested modules (default <version>; Kubernetes numbers
#              its staging modules v0.N.x)
#   --k8s      builds against the k8s.io modules of Kubernetes V (v1.N.x: their v0.N.x releases, as
#              scripts/cluster/build-binaries.sh builds the cluster), whatever the module asks for:
#              the packages it shares with the cluster's build then come from Go's build cache
#              instead of compiling again (Helm, CoreDNS, kube-router, Traefik,
#              local-path-provisioner, the Prometheus Operator and Prometheus). Kubernetes' other
#              requirements are the least versions of theirs: a module the program needs newer
#              stays newer, and what sits above it compiles again
#   --cgo      links C code (Gitea's SQLite); static (CGO_ENABLED=0) otherwise
#   --main     builds F, a main package of the project's that imports <package>s of the module, into
#              the one binary N (--name, required) instead of the module's own main packages: a
#              program whose plugins are chosen at compile time (CoreDNS) builds only those it uses
#
# Always through a wrapper module that requires <module>@<version> and repeats its go.mod's
# replace and exclude lines, which `go install` refuses; a replace that points at a folder of the
# module's own repository points at that nested module's release instead.
# The versions chosen are the module's own (minimal version selection from its requirements).
# Idempotent: when every binary is there the folder is printed at once; a failed build leaves nothing.
set -euo pipefail

name='' ldflags='' tags='' nested='' k8s='' cgo=0 main=''
while [[ ${1:-} == --* ]]; do
  case $1 in
    --name) name=$2 ;;
    --ldflags) ldflags=$2 ;;
    --tags) tags=$2 ;;
    --nested) nested=$2 ;;
    --k8s) k8s=$2 ;;
    --cgo) cgo=1 && shift && continue ;;
    --main) main=$(realpath "$2") ;;
    *) echo "go-tool.sh: unknown option '$1' (--name, --ldflags, --tags, --nested, --k8s, --cgo or --main)" >&2; exit 2 ;;
  esac
  shift 2
done
spec=${1:-}
[[ $spec == ?*@v?* && $# -ge 2 ]] || { echo "usage: go-tool.sh [--name N] [--ldflags F] [--tags T] [--nested V] [--k8s V] [--cgo] [--main F] <module>@<version> <package>..." >&2; exit 2; }
[[ -z $main || -n $name ]] || { echo "go-tool.sh: --main needs --name (the binary's name)" >&2; exit 2; }
shift
module=${spec%@*} version=${spec##*@}
if [[ -z $name ]]; then
  name=${module##*/}
  [[ $name =~ ^v[0-9]+$ ]] && name=$(basename "$(dirname "$module")")
fi
packages=() binaries=()
for p in "$@"; do
  [[ $p == ./* ]] && p=$module/${p#./}
  packages+=("$p")
  b=${p##*/}
  [[ $b =~ ^v[0-9]+$ ]] && b=$(basename "$(dirname "$p")")
  binaries+=("$b")
done
targets=("${packages[@]}")
if [[ -n $main ]]; then binaries=("$name") targets=("./cmd/$name"); fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OBSERVATORY_CACHE=${OBSERVATORY_CACHE:-$here/../../.cache}
# A --main build is kept per content of its file.
dir=$OBSERVATORY_CACHE/$name/$version${k8s:+-k8s$k8s}${main:+-$(sha256sum <"$main" | cut -c1-12)}

missing() { local b; for b in "${binaries[@]}"; do [[ -x $dir/bin/$b ]] || return 0; done; return 1; }
if missing; then
  # One build per folder at a time: `make test` builds ahead (scripts/test/prebuild.sh) while its
  # suites may ask for the same program; the second caller waits and then finds it built.
  mkdir -p "$dir"
  exec 9>"$dir/.lock"
  flock 9
fi
if missing; then
  work=$(mktemp -d "$dir/.build-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "go-tool: building $module@$version (${binaries[*]}; minutes on a cold machine, once)" >&2
  started=$SECONDS
  export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local CGO_ENABLED=$cgo
  (
    cd "$work"
    go mod init "observatory.local/$name-build" >/dev/null 2>&1
    gomod_of() { go mod download -json "$1" | sed -n 's/^\s*"GoMod": "\(.*\)",\?$/\1/p'; }
    echo "require $module $version" >>go.mod
    # Replace lines (single or in blocks) as `replace A => B`, folder targets pointed at release
    # $2 of theirs; exclude lines as they are.
    repeat() {
      awk -v v="$2" '
        function out(line,   lhs, parts) {
          split(line, parts, /[ \t]*=>[ \t]*/)
          lhs = parts[1]; sub(/[ \t].*/, "", lhs)
          if (parts[2] ~ /^\.\.?\//) print "replace " lhs " => " lhs " " v
          else print "replace " line
        }
        /^replace \($/ { r = 1; next }
        r && /^\)/ { r = 0; next }
        r && /=>/ { sub(/^[ \t]+/, ""); sub(/[ \t]*\/\/.*$/, ""); out($0); next }
        /^replace [^(]/ { sub(/^replace[ \t]+/, ""); sub(/[ \t]*\/\/.*$/, ""); out($0) }
        /^exclude \($/, /^\)/ { print; next }
        /^exclude [^(]/ { print }
      ' "$1"
    }
    repeat "$(gomod_of "$module@$version")" "${nested:-$version}" >>go.mod
    # Kubernetes points its k8s.io modules at its staging folders: here at their releases. Its
    # requirements come too: a module the program's own go.mod misses (an import of a dependency
    # without a go.mod of its own) would otherwise be resolved at its newest version, whose
    # requirements raise golang.org/x/sys, grpc and protobuf past the cluster's, and every package
    # above them, k8s.io's included, would compile again instead of coming from the build cache.
    if [[ -n $k8s ]]; then
      k8s_mod=$(gomod_of "k8s.io/kubernetes@$k8s")
      repeat "$k8s_mod" "${k8s/v1./v0.}" >>go.mod
      awk '/^require \($/ { r = 1; next } r && /^\)/ { r = 0; next } r && $2 != "v0.0.0" { print "require " $1 " " $2 }' "$k8s_mod" >>go.mod
    fi
    {
      printf '//go:build tools\n\npackage tools\n\nimport (\n'
      printf '\t_ "%s"\n' "${packages[@]}"
      printf ')\n'
    } >tools.go
    [[ -z $main ]] || { mkdir -p "cmd/$name" && cp "$main" "cmd/$name/main.go"; }
    go mod tidy >/dev/null 2>&1 || go mod tidy
    # The linker drops debug info (-s -w), so the compiler need not make it: a tenth of the compile.
    go build -trimpath -gcflags=all=-dwarf=false ${tags:+-tags "$tags"} -ldflags "-s -w $ldflags" -o "$work/bin/" "${targets[@]}"
  ) >&2
  # Binaries built earlier into the same folder (another package list) stay.
  [[ -d $dir/bin ]] && cp -n "$dir/bin/"* "$work/bin/" 2>/dev/null || true
  rm -rf "$dir/bin" && mv "$work/bin" "$dir/bin"
  echo "go-tool: built $name $version in $((SECONDS - started)) s" >&2
fi
echo "$dir/bin"
