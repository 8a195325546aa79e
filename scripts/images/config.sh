# shellcheck shell=bash
# shellcheck disable=SC2034 # sourced: the scripts that source it use what they need
# Names of the platform's images, in one place; their versions (Node, npm, the stand-ins') are
# those of scripts/versions.sh. Sourced by the scripts here.
# shellcheck source=../versions.sh
source "$(dirname "${BASH_SOURCE[0]}")/../versions.sh"
DEBIAN_SUITE=bookworm
DEBIAN_MIRROR=http://deb.debian.org/debian
# The locally built stand-in for the official node:<line>-<suite>-slim image.
BASE_IMAGE=localhost/observatory/node:$NODE_VERSION-$DEBIAN_SUITE-slim
COMPONENTS=(ingest consumer search jobs controller)  # one Dockerfile target each
IMAGE_PREFIX=${IMAGE_PREFIX:-localhost/observatory}
IMAGE_TAG=${IMAGE_TAG:-dev}

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OBSERVATORY_CACHE=${OBSERVATORY_CACHE:-$REPO_ROOT/.cache}
# Our own Docker daemon: its layers (and the base image) persist in the cache between runs.
DOCKER_DATA=$OBSERVATORY_CACHE/docker
DOCKER_SOCK=/run/observatory-docker.sock
export DOCKER_HOST=unix://$DOCKER_SOCK
DOCKER=/usr/bin/docker   # Debian's CLI (another `docker` may come first on the PATH)
