# shellcheck shell=bash
# Sourced by build.sh (after config.sh): the key of a component image's inputs, and an import into
# the cluster's containerd that is skipped when it already holds that very image.

# The files a component's image is made of, as the Dockerfile reads them: the build recipe, the
# lock file and every workspace manifest (the `manifests` and `deps` stages), patches/, migrations/,
# and the whole folder (less what .dockerignore leaves out) of the service and of every workspace
# package it reaches through its manifests' dependencies or its tsconfig references, transitively.
# With verbatimModuleSyntax each file compiles alone, so no other folder changes its dist/.
image_inputs() {
  local component=$1
  (
    cd "$REPO_ROOT"
    printf '%s\n' Dockerfile .dockerignore package.json package-lock.json tsconfig.json tsconfig.base.json \
      scripts/images/{build.sh,cache.sh,config.sh,service-tree.sh,copy-manifests.sh,build-base.sh}
    find patches migrations -type f
    node -e '
      const { existsSync, readdirSync, readFileSync } = require("node:fs");
      const { join, normalize } = require("node:path");
      const json = (file) => JSON.parse(readFileSync(file, "utf8"));
      const dirs = require("./package.json").workspaces.flatMap((w) =>
        w.endsWith("/*") ? readdirSync(w.slice(0, -2)).map((d) => `${w.slice(0, -2)}/${d}`) : [w]);
      const withManifest = dirs.filter((d) => existsSync(`${d}/package.json`));
      for (const d of withManifest) console.log(`${d}/package.json`);
      const byName = new Map(withManifest.map((d) => [json(`${d}/package.json`).name, d]));
      const keep = new Set();
      const visit = (dir) => {
        if (keep.has(dir)) return;
        keep.add(dir);
        const pkg = json(`${dir}/package.json`);
        const names = [pkg.dependencies, pkg.optionalDependencies, pkg.peerDependencies].flatMap((d) => Object.keys(d ?? {}));
        for (const name of names) if (byName.has(name)) visit(byName.get(name));
        for (const ref of json(`${dir}/tsconfig.json`).references ?? []) visit(normalize(join(dir, ref.path)));
      };
      visit(`services/${process.argv[1]}`);
      console.log([...keep].map((d) => `DIR ${d}`).join("\n"));
    ' "$component" | while read -r line; do
      if [[ $line == DIR\ * ]]; then
        find "${line#DIR }" \( -name node_modules -o -name dist -o -name coverage -o -name .screenshots \) -prune -o \
          -type f -not -name '*.tsbuildinfo' -print
      else
        echo "$line"
      fi
    done
  )
}

# image_key <component> <base image id>: the cache key of that component's image, from its input
# files (names and contents) and the base image.
image_key() {
  local component=$1 base_id=$2
  { echo "base $base_id"; image_inputs "$component" | LC_ALL=C sort -u | (cd "$REPO_ROOT" && xargs -d '\n' sha256sum); } |
    sha256sum | cut -c1-32
}

# The config of a `docker save` or OCI-layout archive's image, as "<config digest> <config JSON>".
archive_config() {
  local manifest digest
  if manifest=$(tar -xOf "$1" manifest.json 2>/dev/null); then
    digest=$(jq -r '.[0].Config' <<<"$manifest")
    echo "sha256:$(basename "$digest" .json) $(tar -xOf "$1" "$digest")"
  else
    digest=$(tar -xOf "$1" ./index.json | jq -r '.manifests[0].digest')
    digest=$(tar -xOf "$1" "./blobs/sha256/${digest#sha256:}" | jq -r .config.digest)
    echo "$digest $(tar -xOf "$1" "./blobs/sha256/${digest#sha256:}")"
  fi
}

# archive_label <archive> <label>: that label of the archive's image (empty when none or no archive).
archive_label() {
  [[ -f $1 ]] || return 0
  archive_config "$1" | cut -d' ' -f2- | jq -r --arg l "$2" '.config.Labels[$l] // empty' 2>/dev/null || true
}

# The config digest of image <ref> in the cluster's containerd (empty when it has no such image).
cluster_config() {
  local sock=$1 ref=$2 manifest
  manifest=$(ctr --address "$sock" -n k8s.io images ls "name==$ref" | awk 'NR == 2 { print $3 }')
  [[ -n $manifest ]] || return 0
  ctr --address "$sock" -n k8s.io content get "$manifest" 2>/dev/null | jq -r '.config.digest // empty' || true
}

# The name containerd gives a `docker save` archive's image (docker.io/ and library/ made explicit).
archive_ref() {
  local ref first
  ref=$(tar -xOf "$1" manifest.json | jq -r '.[0].RepoTags[0]')
  first=${ref%%/*}
  if [[ $ref != */* ]]; then
    ref=docker.io/library/$ref
  elif [[ $first != *.* && $first != *:* && $first != localhost ]]; then
    ref=docker.io/$ref
  fi
  echo "$ref"
}

# import_archive <containerd socket> <archive> [<ref>]: imports the archive into containerd, its
# image named <ref> (default: the archive's own name), unless <ref> there is already the same image
# (same config digest, which covers every layer's content). When <ref> is not the archive's own
# name, that name is dropped after the renaming.
import_archive() {
  local sock=$1 archive=$2 inner=${3:-} ref want
  if tar -tf "$archive" manifest.json >/dev/null 2>&1; then inner=$(archive_ref "$archive"); fi
  ref=${3:-$inner}
  want=$(archive_config "$archive" | cut -d' ' -f1)
  [[ $want == sha256:* && $(cluster_config "$sock" "$ref") == "$want" ]] && return 0
  ctr --address "$sock" -n k8s.io images import "$archive" >/dev/null
  if [[ $inner != "$ref" ]]; then
    ctr --address "$sock" -n k8s.io images tag --force "$inner" "$ref" >/dev/null
    ctr --address "$sock" -n k8s.io images rm "$inner" >/dev/null
  fi
  echo "imported $ref"
}
