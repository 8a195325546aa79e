#!/usr/bin/env bash
# Runs each argument as a bash command, all at once, each one's output held in a file and printed
# whole (in argument order) once it ends; exits 1 when any command failed. For independent steps
# that mostly wait or use one core each (type checks, a rerun that needs no Kafka), on 2 cores.
#
#   scripts/concurrently.sh 'npx tsc -p a.json' 'npx tsc -p b.json'
set -uo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pids=()
for i in $(seq 1 $#); do
  bash -c "${!i}" >"$dir/$i" 2>&1 &
  pids+=($!)
done
status=0
for i in $(seq 1 $#); do
  wait "${pids[$((i - 1))]}"
  code=$?
  echo "${!i}  (exit $code)"
  cat "$dir/$i"
  [ "$code" -eq 0 ] || status=1
done
exit $status
