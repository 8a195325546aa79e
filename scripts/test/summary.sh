#!/usr/bin/env bash
# Prints the failed tests of every workspace's vitest run, then one closing line summing them all
# (see scripts/test/tally-reporter.ts).
set -euo pipefail
if [ -s "$1.failed" ]; then cat "$1.failed"; fi
awk '{p+=$1; f+=$2; s+=$3} END {printf "Tests: %d passed, %d failed, %d skipped\n", p, f, s; exit (f > 0 || p == 0)}' "$1"
