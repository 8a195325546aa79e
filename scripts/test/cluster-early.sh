#!/usr/bin/env bash
# Starts the cluster of the cluster suites and imports the platform's images into it while the fault
# suites of `make test` run (they leave part of the two cores idle), so that the cluster phase begins
# with its suites instead of a minute of booting and importing on near-idle cores. The cluster
# suites' global setup then finds .dev/kubeconfig answering and reuses the cluster.
#
#   scripts/test/cluster-early.sh start <pid file>   # returns once the cluster is ready, images in
#   scripts/test/cluster-early.sh stop <pid file>    # stops what start started, if anything
#
# `start` writes the pid of scripts/cluster/up.sh to <pid file>, and `make test` calls `stop` when
# it ends (up.sh also stops by itself when OBSERVATORY_CLUSTER_PARENT, `make test`'s shell, dies).
# `start` does nothing when the suites use someone else's cluster (KUBECONFIG), when a cluster of
# this tree already runs (`make cluster`: the suites reuse it), or when the prebuild has not yet
# built the cluster and the images (a cold machine: the suites start the cluster themselves).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
usage='usage: cluster-early.sh start|stop <pid file>'
pidfile=${2:?$usage}
export OBSERVATORY_CACHE=${OBSERVATORY_CACHE:-$root/.cache}
# shellcheck source=../cluster/config.sh
source "$root/scripts/cluster/config.sh" # CLUSTER_DIR: where up.sh writes its pid and `ready`

if [[ $1 == stop ]]; then
  [[ -s $pidfile ]] || exit 0
  pid=$(cat "$pidfile")
  grep -q up.sh "/proc/$pid/cmdline" 2>/dev/null || exit 0 # gone already (its pid maybe reused)
  kill "$pid" 2>/dev/null || exit 0
  # up.sh deletes every pod and stops every daemon before it exits: wait for that, within a bound.
  for _ in $(seq 1 90); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 1; done
  echo "scripts/cluster/up.sh (pid $pid) still runs 90 s after SIGTERM" >&2
  exit 1
fi
[[ $1 == start ]] || { echo "$usage" >&2; exit 2; }

[[ -z ${KUBECONFIG:-} && -n ${PREBUILD_CLUSTER_READY:-} && -e $PREBUILD_CLUSTER_READY ]] || exit 0
if [[ -s $CLUSTER_DIR/up.pid ]] && kill -0 "$(cat "$CLUSTER_DIR/up.pid")" 2>/dev/null; then
  exit 0
fi

mkdir -p "$root/.dev"
rm -f "$CLUSTER_DIR/ready" # left by a run that was killed: not this start's
log=$root/.dev/cluster-test.log
started=$SECONDS
setsid "$root/scripts/cluster/up.sh" >"$log" 2>&1 </dev/null &
echo $! >"$pidfile"
until [[ -e $CLUSTER_DIR/ready ]]; do
  kill -0 "$(cat "$pidfile")" 2>/dev/null || { echo "scripts/cluster/up.sh exited early; see $log" >&2; exit 1; }
  ((SECONDS - started < 300)) || { echo "the cluster was not ready within 300 s; see $log" >&2; exit 1; }
  sleep 1
done
"$root/scripts/images/build.sh" >/dev/null
echo "[cluster early] cluster ready and images imported in $((SECONDS - started)) s"
