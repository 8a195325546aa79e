#!/usr/bin/env bash
# Builds ahead, into $OBSERVATORY_CACHE, what the cluster phase of `make test` needs, without starting
# anything: the cluster's Debian packages, binaries and system images (what up.sh builds), the
# platform's images (saved, imported later by the cluster suites), Helm, the add-ons the cluster
# suites deploy, and Gitea for the forge client's suites. `make test` runs it at the lowest CPU
# priority beside the workspace and fault suites, which leave part of the two cores idle. On a cold
# machine that is most of an hour of compiling taken off the end of the run; on a warm one every
# step finds its cache and it takes seconds.
# Every step is safe to run twice at once (each build holds a lock and looks again once it has it),
# so a suite that needs a program before this script got to it builds it, and this one waits.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export OBSERVATORY_CACHE=${OBSERVATORY_CACHE:-$root/.cache}

step() {
  local started=$SECONDS
  "$@" >/dev/null
  echo "prebuild: ${*#"$root/"} ($((SECONDS - started)) s)"
}

# What the cluster suites need comes first, in the order they ask for it: the cluster and its images
# (the suites start once these are built), the add-ons of the monitoring and autoscaling suites, which
# start first, then those of the ingress and proxy-mode suites. Gitea, for the forge client that runs
# after them, last.
step "$root/scripts/cluster/install-deps.sh"
step "$root/scripts/cluster/build-binaries.sh"
# After Kubernetes: Helm compiles against its k8s.io packages, found in Go's build cache.
step "$root/scripts/install/helm.sh"
step "$root/scripts/cluster/system-images.sh"
step "$root/scripts/cluster/build-kube-router.sh"
step "$root/scripts/cluster/local-path-provisioner.sh" build
step env IMPORT=0 "$root/scripts/images/build.sh"
# The cluster suites can start: what they need first is built (`make test` waits for this file).
if [ -n "${PREBUILD_CLUSTER_READY:-}" ]; then touch "$PREBUILD_CLUSTER_READY"; fi
for addon in metrics-server prometheus-operator traefik oauth2-proxy; do
  step "$root/scripts/cluster/$addon.sh" build
done
step "$root/packages/forge-client/scripts/build-gitea.sh"
