#!/usr/bin/env bash
# Starts (`dockerd.sh start`) or stops (`dockerd.sh stop`) the Docker daemon that builds our
# images. No daemon runs on this machine otherwise (PID 1 is not an init system). Ours has its
# own socket, exec root and data root (in the cache, so layers survive), and no bridge, no
# iptables rules, no IP forwarding: builds run with --network host and containers never run.
set -euo pipefail
source "$(dirname "$0")/config.sh"
pidfile=/run/observatory-docker.pid
log=$DOCKER_DATA.log

running() { [[ -f $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

case ${1:-} in
  # The daemon outlives this script: it must not inherit fd 9, the images lock of build.sh.
  start)
    running && exit 0
    mkdir -p "$DOCKER_DATA"
    setsid dockerd --data-root "$DOCKER_DATA" --exec-root /run/observatory-docker --pidfile "$pidfile" \
      -H "$DOCKER_HOST" --bridge none --iptables=false --ip-forward=false --ip-masq=false \
      >"$log" 2>&1 </dev/null 9>&- &
    for ((i = 0; i < 60; i++)); do
      $DOCKER version >/dev/null 2>&1 && exit 0
      sleep 0.5
    done
    echo "dockerd did not start; last lines of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
    ;;
  stop)
    running || exit 0
    pid=$(cat "$pidfile")
    kill -TERM "$pid"
    for ((i = 0; i < 60; i++)); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.5; done
    kill -KILL "$pid" 2>/dev/null || true
    ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
