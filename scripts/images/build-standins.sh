#!/usr/bin/env bash
# Builds the local stand-ins for the official images the chart's evaluation profile names
# (kafka.bundled: apache/kafka, database.bundled: postgres), once per recipe, into our Docker
# daemon (started by build.sh), and saves each to $OBSERVATORY_CACHE/images/. Nothing can be pulled
# here: both are Debian minbase root filesystems (mmdebstrap), with
# - Kafka: Debian's OpenJDK 17 JRE and the broker jars the devstack resolves from Maven Central
#   (cached in $OBSERVATORY_CACHE/kafka/<version>/libs), run by standins/kafka-run.sh as uid 1000,
#   with the one tool the chart runs in it, standins/kafka-configs.sh;
# - PostgreSQL: Debian's postgresql-<major> package, started by standins/postgres-entrypoint.sh
#   as uid 999 (the official image's `postgres` user).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/config.sh"
# The stand-ins' versions (scripts/versions.sh): KAFKA_VERSION is the devstack's default broker,
# whose jars are cached; PostgreSQL is Debian's package of $DEBIAN_SUITE. The chart's
# kafka.bundled.image / database.bundled.image match.
KAFKA_IMAGE=docker.io/apache/kafka:$KAFKA_VERSION
POSTGRES_IMAGE=docker.io/library/postgres:$POSTGRES_MAJOR-$DEBIAN_SUITE
out=$OBSERVATORY_CACHE/images
mkdir -p "$out"

libs=$OBSERVATORY_CACHE/kafka/$KAFKA_VERSION/libs
if [[ ! -f $libs/.complete ]]; then
  (cd "$REPO_ROOT" && node --conditions=source --import tsx -e \
    "import('./packages/devstack/src/kafka-dist.ts').then((m) => m.ensureKafkaDistribution('$KAFKA_VERSION', console.log))")
fi

# build <image> <archive name> <recipe files...> -- <mmdebstrap arguments...> -- <docker import --change...>
build() {
  local image=$1 name=$2
  shift 2
  local files=() mm=() changes=()
  while [[ $1 != -- ]]; do files+=("$1"); shift; done
  shift
  while [[ $1 != -- ]]; do mm+=("$1"); shift; done
  shift
  changes=("$@")
  local recipe
  recipe=$({ cat "$0" "$here/config.sh" "${files[@]}"; echo "kafka=$KAFKA_VERSION postgres=$POSTGRES_MAJOR"; } | sha256sum | cut -c1-16)
  local have
  have=$($DOCKER image inspect -f '{{index .Config.Labels "observatory.recipe"}}' "$image" 2>/dev/null || true)
  if [[ $have != "$recipe" ]]; then
    local t=$SECONDS work
    work=$(mktemp -d "$OBSERVATORY_CACHE/.standin-XXXXXX")
    # shellcheck disable=SC2064 # expand now: the folder of this build (set -e leaves by EXIT)
    trap "rm -rf '$work'" RETURN EXIT
    # The man folders stay (empty): update-alternatives (java, psql) links into them.
    mmdebstrap --quiet --variant=minbase --include=usr-is-merged \
      --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
      --dpkgopt='path-exclude=/usr/share/locale/*' \
      --essential-hook='mkdir -p "$1/usr/share/man/man1" "$1/usr/share/man/man7"' \
      "${mm[@]}" \
      --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/*' \
      "$DEBIAN_SUITE" "$work/rootfs.tar" "$DEBIAN_MIRROR"
    local change_args=()
    for c in "${changes[@]}"; do change_args+=(--change "$c"); done
    $DOCKER import "${change_args[@]}" --change "LABEL observatory.recipe=$recipe" \
      "$work/rootfs.tar" "$image" >/dev/null
    echo "built $image in $((SECONDS - t)) s"
  fi
  [[ -f $out/$name.tar && $have == "$recipe" ]] || $DOCKER save -o "$out/$name.tar" "$image"
}

build "$KAFKA_IMAGE" kafka "$here/standins/kafka-run.sh" "$here/standins/kafka-configs.sh" "$here/standins/log4j2.properties" -- \
  --include=openjdk-17-jre-headless,bash \
  --customize-hook="mkdir -p \"\$1/opt/kafka/libs\" \"\$1/opt/kafka/bin\" \"\$1/opt/kafka/config\" \"\$1/etc/kafka/docker\" \"\$1/var/lib/kafka/data\" && cp $libs/*.jar \"\$1/opt/kafka/libs/\"" \
  --customize-hook="cp $here/standins/kafka-run.sh \"\$1/etc/kafka/docker/run\" && cp $here/standins/kafka-configs.sh \"\$1/opt/kafka/bin/\" && cp $here/standins/log4j2.properties \"\$1/opt/kafka/\"" \
  --customize-hook='chroot "$1" useradd --uid 1000 --user-group --no-create-home --shell /bin/bash appuser' \
  --customize-hook='chown -R 1000:1000 "$1/opt/kafka/config" "$1/var/lib/kafka"' \
  -- \
  'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  "ENV KAFKA_VERSION=$KAFKA_VERSION" \
  'USER 1000:1000' 'WORKDIR /opt/kafka' 'EXPOSE 9092' 'CMD ["/etc/kafka/docker/run"]'

# The official image's `postgres` user is uid 999 (written before useradd exists: passwd is not essential). postgresql-common would make a `main` cluster at install: the image initialises PGDATA itself.
build "$POSTGRES_IMAGE" postgres "$here/standins/postgres-entrypoint.sh" -- \
  --include="postgresql-$POSTGRES_MAJOR,bash" \
  --setup-hook='mkdir -p "$1/etc/postgresql-common" && echo "create_main_cluster = false" >"$1/etc/postgresql-common/createcluster.conf"' \
  --dpkgopt='force-confold' \
  --essential-hook='echo "postgres:x:999:999:PostgreSQL administrator:/var/lib/postgresql:/bin/bash" >>"$1/etc/passwd" && echo "postgres:x:999:" >>"$1/etc/group"' \
  --customize-hook="cp $here/standins/postgres-entrypoint.sh \"\$1/usr/local/bin/docker-entrypoint.sh\"" \
  --customize-hook='mkdir -p "$1/docker-entrypoint-initdb.d" "$1/var/lib/postgresql/data" "$1/var/run/postgresql" && chroot "$1" chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql' \
  -- \
  "ENV PATH=/usr/lib/postgresql/$POSTGRES_MAJOR/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  'ENV PGDATA=/var/lib/postgresql/data' "ENV PG_MAJOR=$POSTGRES_MAJOR" \
  'USER 999:999' 'EXPOSE 5432' 'ENTRYPOINT ["docker-entrypoint.sh"]' 'CMD ["postgres"]'
