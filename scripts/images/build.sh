#!/usr/bin/env bash
# `make images`: builds every component's image from the one Dockerfile with our own Docker
# daemon (started here, stopped again at the end), on a locally built Node base image; saves each
# image and, when the cluster of `make cluster` runs, imports it into its containerd (unless it
# holds that very image already); prints sizes.
# Each component's archive in $OBSERVATORY_CACHE/images/ carries the key of its inputs (cache.sh)
# as a label: a component whose inputs did not change is not built again. The archive names the
# image localhost/observatory-build/<c>:<key>, renamed $IMAGE_PREFIX/<c>:$IMAGE_TAG on import, so
# every tag reuses it.
# IMPORT=0 skips the import; the image archives stay in $OBSERVATORY_CACHE/images/.
# OBSERVATORY_DOCKER=system (a CI runner with Docker and a registry): the machine's own Docker
# daemon and the Dockerfile's default base image (pulled by digest); nothing is installed or started.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"
source "$here/cache.sh"
source "$REPO_ROOT/scripts/cluster/config.sh"
system_docker=0
case ${OBSERVATORY_DOCKER:-} in
  '') ;;
  system) system_docker=1 DOCKER=docker && unset DOCKER_HOST ;;
  *) echo "OBSERVATORY_DOCKER must be empty or 'system', not '$OBSERVATORY_DOCKER'" >&2 && exit 1 ;;
esac
((system_docker)) || "$REPO_ROOT/scripts/cluster/install-deps.sh"

# One build at a time per cache: the daemon below is shared, and a second build's `stop` would
# end the first one's daemon mid-build (two checkouts, or two test runs, building at once).
mkdir -p "$OBSERVATORY_CACHE"
exec 9>"$OBSERVATORY_CACHE/images.lock"
flock 9

started=$SECONDS
out=$OBSERVATORY_CACHE/images
mkdir -p "$out"
sock=$CLUSTER_DIR/run/containerd.sock
import_sock=''
[[ ${IMPORT:-1} == 1 && -S $sock ]] && import_sock=$sock
base_arg=()
if ((!system_docker)); then
  trap '"$here/dockerd.sh" stop' EXIT
  "$here/dockerd.sh" start
  "$here/build-base.sh"
  "$here/build-standins.sh"
  "$here/postgres-exporter.sh" >/dev/null
  base_arg=(--build-arg "NODE_IMAGE=$BASE_IMAGE")
fi

# The components whose archive is missing or was built from other inputs. With the machine's own
# Docker every image is built (the images must be in that daemon; its base is the Dockerfile's).
declare -A keys
todo=()
base_id=$( ((system_docker)) || $DOCKER image inspect -f '{{.Id}}' "$BASE_IMAGE")
for c in "${COMPONENTS[@]}"; do
  keys[$c]=$(image_key "$c" "$base_id")
  ((!system_docker)) && [[ $(archive_label "$out/$c.tar" observatory.inputs) == "${keys[$c]}" ]] || todo+=("$c")
done

mib() { echo "$(($1 / 1048576)) MiB"; }
sizes=()
# A TLS-inspecting proxy's CA (trusted here through NODE_EXTRA_CA_CERTS) for npm inside the build.
ca_secret=()
[[ -n ${NODE_EXTRA_CA_CERTS:-} && -f $NODE_EXTRA_CA_CERTS ]] && ca_secret=(--secret "id=extra_ca,src=$NODE_EXTRA_CA_CERTS")
for c in "${todo[@]}"; do
  t=$SECONDS
  image=$IMAGE_PREFIX/$c:$IMAGE_TAG
  # --network host: npm reaches the registry as it does on this machine; Docker has no bridge.
  DOCKER_BUILDKIT=1 $DOCKER build --quiet --network host --target "$c" "${ca_secret[@]}" \
    "${base_arg[@]}" --build-arg "SERVICES=${COMPONENTS[*]}" --label "observatory.inputs=${keys[$c]}" \
    -t "$image" -t "localhost/observatory-build/$c:${keys[$c]}" "$REPO_ROOT" >/dev/null
  # Written aside, then renamed: an interrupted save never looks like a complete archive.
  $DOCKER save -o "$out/.$c.tar" "localhost/observatory-build/$c:${keys[$c]}"
  mv "$out/.$c.tar" "$out/$c.tar"
  $DOCKER rmi "localhost/observatory-build/$c:${keys[$c]}" >/dev/null # the name only; $image stays
  bytes=$($DOCKER image inspect -f '{{.Size}}' "$image")
  app_mib=$($DOCKER run --rm --network none --entrypoint du "$image" -sm /app | cut -f1)
  sizes+=("$(printf '%-36s %8s  (/app, its code and production dependencies: %s MiB)' "$image" "$(mib "$bytes")" "$app_mib")")
  echo "built $image in $((SECONDS - t)) s"
done
cached=()
for c in "${COMPONENTS[@]}"; do [[ " ${todo[*]} " == *" $c "* ]] || cached+=("$c"); done
((${#cached[@]} == 0)) || echo "unchanged inputs, archive reused: ${cached[*]}"
node_bytes=0
if ((${#todo[@]})); then
  node_bytes=$($DOCKER run --rm --network none --entrypoint stat "$image" -c %s /usr/local/bin/node 2>/dev/null || echo 0)
fi
if ((!system_docker)); then
  # Earlier builds' images, untagged by this one, would otherwise pile up in the cache.
  $DOCKER image prune --force >/dev/null
  "$here/dockerd.sh" stop
fi

if [[ -n $import_sock ]]; then
  for c in "${COMPONENTS[@]}"; do import_archive "$import_sock" "$out/$c.tar" "$IMAGE_PREFIX/$c:$IMAGE_TAG"; done
  for standin in kafka postgres; do import_archive "$import_sock" "$out/$standin.tar"; done
  echo "in the cluster's containerd ($import_sock)"
fi
if ((${#sizes[@]})); then
  echo "image sizes (uncompressed; the Node binary is $(mib "$node_bytes") of each, Debian's runtime libraries most of the rest):"
  printf '  %s\n' "${sizes[@]}"
fi
echo "images built in $((SECONDS - started)) s"
